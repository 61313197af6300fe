//! window: window mode, memtier's. Each connection keeps `pipeline` single requests in
//! flight, refilled as replies arrive (a sliding window, not batches), from its client's
//! stream of requests (`Window`); each request's latency is from its own send. A client
//! has a budget of requests (its -n) and its own end; after --test-time the replies in
//! flight are waited for (at most `plan::DRAIN_LIMIT_NS`; after a --time-limit, all). An
//! optional rate limit allows `per_tick` requests per connection per tick.

use crate::base::clock;
use crate::base::resp::{ErrClass, Kind};
use crate::engine::plan::WindowPlan;
use crate::engine::route::Route;
use crate::engine::source::{Batches, Window};
use crate::engine::stats::ThreadStats;
use crate::engine::worker::Worker;

impl<B: Batches, W: Window> Worker<'_, B, W> {
    /// Rate-limited: a connection sends its first tick's requests once connected.
    pub(super) fn start_ticks(&mut self, t0: u64, iv: u64) -> Result<(), String> {
        for i in 0..self.conns.len() {
            self.conns[i].next_due = t0 + iv;
            self.next_closed(i, t0)?;
        }
        Ok(())
    }

    /// The rate limit: at each tick of a connection's timer its allowance is reset to
    /// `per_tick` (unused requests are not carried over, a late tick does not catch up)
    /// and its window refilled; returns the next tick still to come.
    pub(super) fn tick_windows(&mut self, now: u64, iv: u64) -> Result<u64, String> {
        let per_tick = self.plan.window().and_then(|m| m.per_tick).unwrap_or(u32::MAX);
        let mut earliest = u64::MAX;
        for i in 0..self.conns.len() {
            let due = self.conns[i].next_due;
            if due <= now {
                let next = due + iv;
                self.conns[i].next_due = if next > now { next } else { now + iv };
                if let Some(m) = self.conns[i].window.as_mut() {
                    m.left = per_tick;
                }
                self.next_closed(i, now)?;
            }
            earliest = earliest.min(self.conns[i].next_due);
        }
        Ok(earliest)
    }

    /// Tops connection i's window up to `pipeline` requests in flight (within its
    /// client's -n and the deadline) and writes them out. The bytes of answered requests
    /// are dropped from the front of the buffer first, so it holds at most `pipeline`
    /// requests and never grows. In cluster mode the requests are its client's for this
    /// connection's primary (`write_for_node`).
    pub(super) fn refill_window(&mut self, i: usize, now: u64) -> Result<(), String> {
        let plan = self.plan;
        let Some(m) = plan.window() else { return Ok(()) };
        if self.measure_end.is_some_and(|e| now >= e) {
            return Ok(());
        }
        if self.send_in_flight(i) {
            self.defer_until_sent(i);
            return Ok(());
        }
        let room = self.window_room(i, m);
        if room == 0 {
            return Ok(());
        }
        self.drop_answered(i);
        let added = self.write_requests(i, m, room);
        if added == 0 {
            return Ok(());
        }
        let c = &mut self.conns[i];
        if let Some(w) = c.window.as_mut().filter(|w| w.left != u32::MAX) {
            w.left -= added as u32;
        }
        c.wlen = c.wbuf.len();
        c.expected += added;
        c.busy = true;
        c.measured = true;
        self.issued += added as u64;
        self.inflight += added as u64;
        self.flush_conn(i)
    }

    /// Requests connection i may add now: room in its window and its tick's allowance,
    /// short of its client's reconnect point (memtier's hold_pipeline: answered % N + in
    /// flight stays below N); 0 when its client's budget is spent (outside cluster mode).
    fn window_room(&self, i: usize, m: &WindowPlan<W>) -> usize {
        let Some(w) = self.conns[i].window.as_ref() else { return 0 };
        let Some(cl) = self.clients.get(w.client) else { return 0 };
        let mut room = (self.plan.pipeline - w.window.len()).min(w.left as usize);
        if let Some(n) = m.reconnect_every {
            room = room.min((n - cl.answered % n).saturating_sub(w.window.len() as u64) as usize);
        }
        let cluster = self.plan.route == Route::Sampled;
        if !cluster && cl.budget == 0 {
            return 0;
        }
        room
    }

    /// Drops the bytes of answered requests from the front of connection i's buffer.
    fn drop_answered(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let Some(w) = c.window.as_mut() else { return };
        let keep = w.window.front().map_or(c.wlen, |r| r.1 as usize);
        if keep > 0 {
            c.wbuf.copy_within(keep..c.wlen, 0);
            c.wbuf.truncate(c.wlen - keep);
            c.wlen -= keep;
            c.written = c.written.saturating_sub(keep);
            w.window.iter_mut().for_each(|r| r.1 -= keep as u32);
        }
    }

    /// Appends up to `room` of its client's requests to connection i's buffer and window;
    /// returns how many.
    fn write_requests(&mut self, i: usize, m: &WindowPlan<W>, room: usize) -> usize {
        let p = &*m.source;
        let cluster = self.plan.route == Route::Sampled;
        let Worker { conns, clients, stats, owner, .. } = self;
        let c = &mut conns[i];
        let Some(w) = c.window.as_mut() else { return 0 };
        let Some(cl) = clients.get_mut(w.client) else { return 0 };
        let sent = clock::now();
        let mut added = 0;
        while added < room {
            let start = c.wbuf.len();
            let ci = if cluster {
                match p.write_for_node(&mut cl.client, &mut cl.queues, owner, c.node, &mut cl.budget, &mut c.wbuf) {
                    Some(ci) => ci,
                    None => break,
                }
            } else if cl.budget > 0 {
                cl.budget -= 1;
                p.write_next(&mut cl.client, &mut c.wbuf)
            } else {
                break;
            };
            w.window.push_back((ci as u16, start as u32, sent));
            stats.cmds[p.row(ci)].bytes_tx += (c.wbuf.len() - start) as u64;
            added += 1;
        }
        added
    }

    /// The reply (`len` bytes at `at`) to the oldest request in connection i's window;
    /// latency from that request's own send time. The window is refilled after the read
    /// (see `on_bytes`).
    pub(super) fn on_window_reply(&mut self, i: usize, now: u64, kind: Kind, at: usize, len: usize) -> Result<(), String> {
        let plan = self.plan;
        let Some(m) = plan.window() else { return Ok(()) };
        let c = &mut self.conns[i];
        let Some(&(ci, _, sent)) = c.window.as_ref().and_then(|w| w.window.front()) else {
            return Err(self.lost(i, "reply without a request".into()));
        };
        c.expected -= 1;
        c.busy = c.expected > 0;
        self.inflight -= 1;
        let latency = self.window_latency(i, now, kind, at, sent)?;
        let c = &mut self.conns[i];
        let Some(w) = c.window.as_mut() else { return Ok(()) };
        let Some(cl) = self.clients.get_mut(w.client) else { return Ok(()) };
        let ci = ci as usize;
        let hit = m.source.on_reply(&mut cl.client, ci, &c.rbuf[at..at + len]);
        self.stats.record_cmd(m.source.row(ci), latency.unwrap_or(0), len, hit, latency.is_none());
        w.window.pop_front();
        cl.answered += 1;
        let done = match (self.measure_end, m.client_quota) {
            (Some(e), Some(q)) => now >= e || cl.answered >= q,
            (Some(e), None) => now >= e,
            (None, Some(q)) => cl.answered >= q,
            (None, None) => false,
        };
        if done && cl.end.is_none() {
            cl.end = Some(now);
        }
        let reconnect = m.reconnect_every.is_some_and(|n| cl.answered % n == 0) && !done;
        if reconnect && w.window.is_empty() {
            self.reconnect(i)?;
        }
        Ok(())
    }

    /// Records a window reply sent at `sent`: its latency, or None for an error reply
    /// (MOVED updates the slot map; an ASK retried with success has a latency).
    fn window_latency(&mut self, i: usize, now: u64, kind: Kind, at: usize, sent: u64) -> Result<Option<u64>, String> {
        let Kind::Error { class, start, end } = kind else {
            self.stats.record(now, now.saturating_sub(sent), now.saturating_sub(sent));
            return Ok(Some(now.saturating_sub(sent)));
        };
        self.stats.record_error(now, class);
        self.stats.note_error(class, &self.conns[i].rbuf[at + start..at + end]);
        if class == ErrClass::Moved {
            self.on_moved(i, at + start, at + end);
        }
        if class == ErrClass::Ask && self.retry_ask(i, at + start, at + end)? {
            let t = clock::now();
            self.stats.record(t, t - sent, t - sent);
            return Ok(Some(t - sent));
        }
        Ok(None)
    }

    /// The drain is part of the run (its replies counted); the rate's time is each
    /// client's own end (see `ClientState::end`), summed for the mean.
    pub(super) fn finish_window(mut self, now: u64) -> ThreadStats {
        for m in &self.clients {
            let end = m.end.unwrap_or(now);
            self.stats.client_time_ns += u128::from(end.saturating_sub(self.measure_start));
            self.stats.clients += 1;
        }
        self.stats.undrained = self.inflight;
        self.stats.finish(now);
        self.stats
    }
}
