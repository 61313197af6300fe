//! net/failover: the event loop's side of `--reconnect-on-error` (see `reconnect`):
//! taking a connection down (its in-flight requests counted as errors), and bringing
//! it back after its backoff, on the same node or the next of the list — in a cluster,
//! on the node that serves its shard's slots now (the slot map read again first).

use crate::base::clock;
use crate::base::resp::{encode_args, ErrClass};
use crate::base::slots;
use crate::base::transport::{self, Endpoint, Stream};
use crate::engine::conn::register;
use crate::engine::reconnect::{self, After};
use crate::engine::route::owner_table;
use crate::engine::source::{Batches, Window};
use crate::engine::worker::Worker;

impl<B: Batches, W: Window> Worker<'_, B, W> {
    /// A connection failed (reset, EOF, write error): the run's end without
    /// --reconnect-on-error, else the connection goes down until its backoff passes.
    pub(super) fn fail(&mut self, i: usize, why: String) -> Result<(), String> {
        if self.plan.reconnect_ns.is_none() {
            return Err(self.lost(i, why));
        }
        if self.conns[i].rc.is_down() {
            return Ok(());
        }
        self.take_down(i, clock::now(), After::Retry)
    }

    /// The kind of the error reply at `start..end` of connection i's read buffer goes
    /// into the timeline; a failover kind asks for a reconnect once the batch is in.
    pub(super) fn note_error_kind(&mut self, i: usize, now: u64, measured: bool, start: usize, end: usize) {
        let kind = reconnect::kind_of(&self.conns[i].rbuf[start..end]);
        if measured {
            self.stats.timeline.error(now.saturating_sub(self.measure_start), kind, 1);
        }
        let how = reconnect::after(kind);
        if self.plan.reconnect_ns.is_some() && how != After::Continue {
            self.conns[i].rc.pending = Some(how);
        }
    }

    /// Closes connection i's part in the loop: requests still unanswered are errors of
    /// kind `connection` (never dropped silently); retried after the backoff, on the
    /// next node of the list with `After::NextNode`.
    pub(super) fn take_down(&mut self, i: usize, now: u64, how: After) -> Result<(), String> {
        let base = self.plan.reconnect_ns.unwrap_or(reconnect::DEFAULT_BACKOFF_MS * 1_000_000);
        let nodes = self.plan.endpoints.len();
        let since = now.saturating_sub(self.measure_start);
        let clustered = self.clustered();
        let c = &mut self.conns[i];
        self.stats.timeline.lane = c.home;
        let lost = c.expected as u64;
        if lost > 0 && c.measured {
            self.inflight -= lost;
            for _ in 0..lost {
                self.stats.record_error(now, ErrClass::Other);
            }
            self.stats.timeline.error(since, reconnect::CONNECTION, lost);
        }
        c.expected = 0;
        c.busy = false;
        c.written = 0;
        c.wlen = 0;
        c.rpos = 0;
        c.rend = 0;
        c.want_write = false;
        let _ = self.poll.registry().deregister(c.stream.source());
        if how == After::NextNode && !clustered {
            c.node = (c.node + 1) % nodes; // a cluster's new primary comes from its slot map
        }
        c.rc.down(now, base);
        Ok(())
    }

    /// --ack-log: the key of the command connection i's latest reply acknowledged (the
    /// reply's index in the batch, as `retry_ask` finds it).
    pub(super) fn log_ack(&mut self, i: usize) {
        let Some(idx) = self.answered_index(i) else { return };
        let (from, to) = self.request_span(i, idx);
        if let Some(req) = self.conns[i].wbuf.get(from..to) {
            self.stats.timeline.ack(req);
        }
    }

    /// Reconnects every down connection whose backoff has passed; a node that refuses
    /// hands it to the next node of the list; when none accepts, the backoff grows.
    pub(super) fn revive_due(&mut self, now: u64) -> Result<(), String> {
        let Some(base) = self.plan.reconnect_ns else { return Ok(()) };
        let mut map_read = false;
        for i in 0..self.conns.len() {
            if self.conns[i].rc.retry_at.is_none_or(|t| t > now) {
                continue;
            }
            if self.clustered() {
                if !map_read {
                    self.read_slot_map();
                    map_read = true;
                }
                self.revive_in_cluster(i, now, base)?;
                continue;
            }
            let nodes = self.plan.endpoints.len();
            // One pass over the list: a refusing node hands over to the next at once.
            let mut stream = None;
            for _ in 0..nodes {
                let node = self.conns[i].node;
                match transport::connect(&self.plan.endpoints[node], &self.plan.connect) {
                    Ok(s) => {
                        stream = Some(s);
                        break;
                    }
                    Err(_) => self.conns[i].node = (node + 1) % nodes,
                }
            }
            match stream {
                Some(s) => self.revived(i, s)?,
                None => {
                    self.conns[i].rc.down(now, base);
                }
            }
        }
        Ok(())
    }
}

impl<B: Batches, W: Window> Worker<'_, B, W> {
    /// Cluster mode: some endpoint serves slots (standalone ones serve none).
    pub(super) fn clustered(&self) -> bool {
        self.plan.slots.iter().any(|s| !s.is_empty())
    }

    /// Reads CLUSTER SLOTS from the first endpoint that answers (primaries, then the
    /// replicas kvload listed at the start) into this thread's slot map; the map stays
    /// as it was when none answers.
    fn read_slot_map(&mut self) {
        let ask = encode_args(&[b"CLUSTER", b"SLOTS"]);
        for ep in &self.plan.endpoints {
            let Ok(reply) = transport::command(ep, &self.plan.connect, &ask) else { continue };
            let Ok(nodes) = slots::nodes_from_slots(&reply) else { continue };
            let mut slots = vec![Vec::new(); self.plan.endpoints.len()];
            for n in nodes {
                let ep = Endpoint::Tcp(n.host, n.port);
                if let Some(k) = self.plan.endpoints.iter().position(|e| *e == ep) {
                    slots[k] = n.slots;
                }
            }
            if !self.owner.is_empty() {
                self.owner = owner_table(&slots);
            }
            self.slots = slots;
            return;
        }
    }

    /// Brings connection i back on the node that now serves its shard (the owner of its
    /// first node's first slot); a node that refuses keeps it down for another backoff.
    fn revive_in_cluster(&mut self, i: usize, now: u64, base: u64) -> Result<(), String> {
        let home_slot = self.plan.slots[self.conns[i].home].first().copied();
        if let Some(slot) = home_slot {
            if let Some(k) = self.slots.iter().position(|l| l.contains(&slot)) {
                let was = self.conns[i].node;
                if let (true, Some(b), Some(keys)) = (k != was, self.plan.batches(), self.keys.as_mut()) {
                    b.carry_lane(keys, was, k); // its keys go on, not over again
                }
                self.conns[i].node = k;
            }
        }
        let node = self.conns[i].node;
        match transport::connect(&self.plan.endpoints[node], &self.plan.connect) {
            Ok(s) => self.revived(i, s)?,
            Err(_) => {
                self.conns[i].rc.down(now, base);
            }
        }
        Ok(())
    }

    /// Connection i is up again on stream `s`: registered, its backoff cleared and, in a
    /// closed loop, its next batch sent.
    fn revived(&mut self, i: usize, mut s: Stream) -> Result<(), String> {
        register(&self.poll, &mut s, i)?;
        let c = &mut self.conns[i];
        c.stream = s;
        c.rc.retry_at = None;
        if self.plan.interval_ns.is_none() {
            self.next_closed(i, clock::now())?;
        }
        Ok(())
    }
}
