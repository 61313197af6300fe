//! batch: batch mode, kvload's own. A connection sends `pipeline` instances of the plan's
//! command sequence at once (`Batches::write` patches them in place) and waits for all
//! their replies; then the next batch at once (closed loop) or at its next intended send
//! time (open loop: a grid staggered over the connections, or Poisson arrivals), a late
//! send's latency counted from its intended time.

use crate::base::clock;
use crate::base::resp::{ErrClass, Kind};
use crate::base::schedule;
use crate::engine::reconnect;
use crate::engine::route::Route;
use crate::engine::source::{Batches, Target, Window};
use crate::engine::worker::Worker;

/// An open-loop send more than this late (ns) counts as late; as kvload's own lateness
/// (`late_own`) when it went out this long after both its intended time and the reply that
/// freed its connection (the rest of `late` waited for the server: every connection busy).
const LATE_NS: u64 = 1_000_000;

impl<B: Batches, W: Window> Worker<'_, B, W> {
    /// Commands per instance of the batch.
    #[inline]
    fn commands(&self) -> usize {
        self.plan.batches().map_or(1, |b| b.commands())
    }

    /// The gap to a connection's next intended send: `iv`, or an exponential draw of
    /// mean `iv` with Poisson arrivals.
    fn gap(&mut self, iv: u64) -> u64 {
        if self.plan.poisson {
            schedule::exp_gap_ns(iv, self.arrivals.next())
        } else {
            iv
        }
    }

    /// Open loop: every connection's first intended send time.
    pub(super) fn start_open(&mut self, t0: u64, iv: u64) {
        if self.plan.poisson {
            for i in 0..self.conns.len() {
                self.conns[i].next_due = t0 + self.gap(iv);
            }
            return;
        }
        for (c, &(_, g)) in self.conns.iter_mut().zip(&self.plan.conns) {
            c.next_due = schedule::first_due(t0, iv, g, self.plan.total_clients);
        }
    }

    /// Instances of the template to put in the next batch.
    pub(super) fn batch_size(&self, measured: bool) -> usize {
        let p = self.plan.pipeline;
        match (measured, self.quota_left()) {
            (true, Some(left)) => {
                let k = self.commands() as u64;
                (left.div_ceil(k) as usize).min(p)
            }
            _ => p,
        }
    }

    /// Open loop: send every idle connection whose intended time has come; returns
    /// the next intended time still to come (u64::MAX: none).
    pub(super) fn dispatch_batches(&mut self, now: u64, iv: u64) -> Result<u64, String> {
        let mut earliest = u64::MAX;
        for i in 0..self.conns.len() {
            let (busy, due) = (self.conns[i].busy, self.conns[i].next_due);
            if busy || self.conns[i].rc.is_down() || self.send_in_flight(i) {
                continue;
            }
            if self.measure_end.is_some_and(|e| due >= e) {
                continue;
            }
            if due > now {
                earliest = earliest.min(due);
                continue;
            }
            // measured when sent in the window (`due <= now`: every send intended in it
            // too): an overloaded schedule's backlog from the lead-in goes out in the window
            // and counts there, its latency from its intended time, as the replies a
            // closed loop reads there do. By intended time alone, far enough above
            // saturation nothing due in the window was sent in it: "no requests".
            let measured = now >= self.measure_start;
            let count = self.batch_size(measured);
            if count == 0 {
                continue;
            }
            self.conns[i].next_due = due + self.gap(iv);
            self.send_batch(i, due, count, measured)?;
            let (c, requests) = (&self.conns[i], (count * self.commands()) as u64);
            if measured && c.sent > due + LATE_NS {
                self.stats.late += requests;
                if c.sent > due.max(c.freed) + LATE_NS {
                    self.stats.late_own += requests;
                }
            }
        }
        Ok(earliest)
    }

    pub(super) fn send_batch(&mut self, i: usize, intended: u64, count: usize, measured: bool) -> Result<(), String> {
        self.fill_batch(i, count);
        let c = &mut self.conns[i];
        c.intended = intended;
        c.measured = measured;
        c.busy = true;
        c.sent = clock::now();
        if self.plan.interval_ns.is_none() {
            c.intended = c.sent;
        }
        if measured {
            self.issued += c.expected as u64;
            self.inflight += c.expected as u64;
        }
        self.flush_conn(i)
    }

    /// Writes `count` instances into connection i's buffer, their keys routed to its node.
    fn fill_batch(&mut self, i: usize, count: usize) {
        let Worker { plan, conns, keys, owner, slots, max_tries, .. } = self;
        let (Some(source), Some(keys)) = (plan.batches(), keys.as_mut()) else { return };
        let c = &mut conns[i];
        let to = Target { sampled: plan.route == Route::Sampled, owner, shard: plan.shard(c.node), max_tries: *max_tries, slots: &slots[c.node] };
        c.wlen = source.write(keys, &mut c.wbuf, count, &to);
        c.written = 0;
        c.expected = count * source.commands();
    }

    /// The reply (at `at` in the read buffer) to the next command of connection i's batch.
    /// A measured success is only counted here (`oks`): the replies of a batch read at
    /// the same time have the same latency, so they are recorded together by `record_oks`
    /// (before an error reply, at the batch's end, after the read's last reply).
    pub(super) fn on_batch_reply(&mut self, i: usize, now: u64, kind: Kind, at: usize) -> Result<(), String> {
        let c = &mut self.conns[i];
        c.expected -= 1;
        let (measured, done) = (c.measured, c.expected == 0);
        if measured {
            self.inflight -= 1;
        }
        match kind {
            Kind::Error { class, start, end } => {
                self.record_oks(i, now);
                self.on_batch_error(i, now, class, at + start, at + end)?;
            }
            _ if measured => {
                self.conns[i].rc.ok();
                self.oks += 1;
                if self.stats.timeline.acks.is_some() {
                    self.record_oks(i, now);
                    self.log_ack(i);
                }
            }
            _ => self.conns[i].rc.ok(),
        }
        if done {
            self.record_oks(i, now);
            return self.batch_done(i, now);
        }
        Ok(())
    }

    /// Records the successes counted in `oks`, replies of connection i's batch read at
    /// `now`: the latency of each from its batch's intended and actual send times.
    #[inline]
    pub(super) fn record_oks(&mut self, i: usize, now: u64) {
        if self.oks == 0 {
            return;
        }
        let c = &self.conns[i];
        self.stats.record_n(now, now.saturating_sub(c.intended), now.saturating_sub(c.sent), self.oks);
        self.oks = 0;
    }

    /// An error reply (its text at `start..end`): counted, its kind in the timeline; MOVED
    /// updates the slot map, ASK is retried on the named node.
    fn on_batch_error(&mut self, i: usize, now: u64, class: ErrClass, start: usize, end: usize) -> Result<(), String> {
        let (measured, intended, sent) = (self.conns[i].measured, self.conns[i].intended, self.conns[i].sent);
        if measured {
            self.stats.record_error(now, class);
            self.stats.note_error(class, &self.conns[i].rbuf[start..end]);
        }
        self.note_error_kind(i, now, measured, start, end);
        if class == ErrClass::Moved {
            self.on_moved(i, start, end);
            if self.plan.reconnect_ns.is_some() && self.clustered() {
                // its node gave the slots away (a failover): back on their owner
                self.conns[i].rc.pending = Some(reconnect::After::Retry);
            }
        }
        if class == ErrClass::Ask && self.retry_ask(i, start, end)? && measured {
            let t = clock::now();
            self.stats.record(t, t.saturating_sub(intended), t.saturating_sub(sent));
        }
        Ok(())
    }

    /// Connection i's batch is answered: down for a failover, a new socket with -k 0, and
    /// in the closed loop the next batch.
    fn batch_done(&mut self, i: usize, now: u64) -> Result<(), String> {
        self.conns[i].busy = false;
        self.conns[i].freed = now;
        if let Some(how) = self.conns[i].rc.pending {
            return self.take_down(i, now, how);
        }
        if !self.plan.keepalive {
            self.reconnect(i)?;
        }
        if self.plan.interval_ns.is_none() {
            self.next_closed(i, now)?;
        }
        Ok(())
    }

    /// Open loop with --duration: the batches the schedule had before the end that were
    /// never sent (counted as `unsent`, in requests).
    pub(super) fn count_unsent(&mut self) {
        let (Some(iv), Some(e)) = (self.plan.interval_ns, self.measure_end) else { return };
        let per_batch = (self.plan.pipeline * self.commands()) as u64;
        for c in &self.conns {
            let from = c.next_due.max(self.measure_start);
            // Grid alignment: skip forward to the first slot >= measure_start.
            let from = if c.next_due >= self.measure_start {
                from
            } else {
                c.next_due + (self.measure_start - c.next_due).div_ceil(iv) * iv
            };
            self.stats.unsent += schedule::batches_between(from, e, iv) * per_batch;
        }
    }
}
