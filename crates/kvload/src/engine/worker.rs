//! worker: one shared-nothing event loop per thread over its connections — their state,
//! setting them up, and what both loops (epoll in `epoll_loop`, io_uring in `uring_loop`)
//! share: the run's start and end, reading replies, MOVED and ASK, -k 0 reconnects.
//! What is sent comes from the plan's `Requests`: batches (`batch`: closed loop, each
//! connection sends a batch of P and waits for its replies; open loop on an intended-send
//! schedule, wrk2-style) or windows (`window`: memtier's sliding window per connection).

use std::sync::Barrier;

use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};

use crate::base::clock::{self, Timer};
use crate::base::event_loop::IoKind;
use crate::base::resp::{self, Kind};
use crate::base::rng::Rng;
use crate::base::slots;
use crate::base::transport::{self, Endpoint};
use crate::engine::conn::{self, register, ClientState, Conn};
use crate::engine::plan::{Plan, Requests};
use crate::engine::ring::UringState;
use crate::engine::route::{self, Route};
use crate::engine::source::{Batches, Window};
use crate::engine::stats::{CmdStats, ThreadStats};
use crate::engine::timeline::Timeline;

/// Salt of the Poisson arrivals' generator (apart from the keys' own draws).
const ARRIVALS_SALT: u64 = 0x5851_f42d_4c95_7f2d;
/// Open loop: a send due within this many ns is waited for by polling again, not by
/// sleeping (a sleep arms a timer and costs a wakeup: more CPU than this on a VM, and a
/// wakeup's latency besides).
pub(super) const SPIN_NS: u64 = 5_000;
/// The epoll loop's token of the open loop's timer (connections are tokens 0..n).
pub(super) const TIMER: Token = Token(usize::MAX - 1);

pub(super) struct Worker<'a, B: Batches, W: Window> {
    pub(super) plan: &'a Plan<B, W>,
    pub(super) poll: Poll,
    pub(super) conns: Vec<Conn>,
    pub(super) stats: ThreadStats,
    /// Batch mode: the generator of keys (None in window mode).
    pub(super) keys: Option<B::Keys>,
    pub(super) slots: Vec<Vec<u16>>,
    /// Slot → node index, kept up to date with MOVED (Route::Sampled).
    pub(super) owner: Vec<u16>,
    /// Draws per request before Route::Sampled gives up (64 × primaries).
    pub(super) max_tries: u32,
    pub(super) timer: Option<Timer>,
    pub(super) issued: u64,
    pub(super) inflight: u64,
    pub(super) measure_start: u64,
    pub(super) measure_end: Option<u64>,
    pub(super) measuring: bool,
    /// Blocking side connections used to retry ASK redirections.
    pub(super) ask_conns: Vec<(Endpoint, transport::Blocking)>,
    /// `--io uring`: the ring and per-connection io_uring state (None: epoll).
    pub(super) ur: Option<Box<UringState>>,
    /// Window mode: this thread's clients (see `WindowPlan`).
    pub(super) clients: Vec<ClientState<W>>,
    /// `Plan::poisson`: the draws of the gaps between intended send times.
    pub(super) arrivals: Rng,
    /// Batch mode: successful replies of the connection being read, not recorded yet
    /// (`record_oks`).
    pub(super) oks: u64,
}

pub(super) fn fatal(msg: String) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}

/// The open loop's timer, registered with `poll`.
fn timer(poll: &Poll) -> Result<Timer, String> {
    let t = Timer::new()?;
    poll.registry()
        .register(&mut SourceFd(&t.fd), TIMER, Interest::READABLE)
        .map_err(|e| format!("register timer: {e}"))?;
    Ok(t)
}

/// Connects this thread's share, waits at the barrier, runs, returns stats.
pub fn run<B: Batches, W: Window>(plan: &Plan<B, W>, barrier: &Barrier) -> ThreadStats {
    let w = Worker::new(plan).unwrap_or_else(|e| fatal(e));
    barrier.wait();
    w.run().unwrap_or_else(|e| fatal(e))
}

/// A thread's statistics: open-loop latencies unless window mode (memtier's rate limit is
/// no open loop: latency from the send, as memtier's), the timeline, per-row results.
fn thread_stats<B: Batches, W: Window>(plan: &Plan<B, W>) -> ThreadStats {
    let mut stats = ThreadStats::new(plan.sigfig, plan.interval_ns.is_some() && plan.window().is_none());
    stats.timeline = Timeline::new(plan.reconnect_ns.is_some());
    if plan.ack_log {
        stats.timeline.acks = Some(Vec::new());
    }
    if let Some(m) = plan.window() {
        stats.cmds = vec![CmdStats::new(plan.sigfig); m.source.rows()];
    }
    stats
}

/// Batch mode: the thread's key generator, with a lane per shard when keys are routed.
fn thread_keys<B: Batches, W: Window>(plan: &Plan<B, W>) -> Option<B::Keys> {
    let Requests::Batches { source, keys } = &plan.requests else { return None };
    let mut keys = keys.clone();
    if plan.route == Route::Sampled {
        source.set_lanes(&mut keys, plan.owner_slots().len());
    }
    Some(keys)
}

impl<'a, B: Batches, W: Window> Worker<'a, B, W> {
    fn new(plan: &'a Plan<B, W>) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let conns = conn::connect_all(plan, &poll)?;
        let ur = match plan.io {
            IoKind::Uring => Some(Box::new(UringState::for_conns(&conns)?)),
            IoKind::Epoll => None,
        };
        let timer = match plan.interval_ns {
            Some(_) if ur.is_none() => Some(timer(&poll)?),
            _ => None,
        };
        let sampled = plan.route == Route::Sampled;
        Ok(Worker {
            plan,
            poll,
            conns,
            stats: thread_stats(plan),
            keys: thread_keys(plan),
            slots: plan.slots.clone(),
            owner: if sampled { route::owner_table(plan.owner_slots()) } else { Vec::new() },
            max_tries: (64 * plan.owner_slots().len()).min(u32::MAX as usize) as u32,
            timer,
            issued: 0,
            inflight: 0,
            measure_start: 0,
            measure_end: None,
            measuring: false,
            ask_conns: Vec::new(),
            ur,
            clients: conn::client_states(plan),
            arrivals: Rng::new(plan.arrivals_seed ^ ARRIVALS_SALT),
            oks: 0,
        })
    }

    fn run(self) -> Result<ThreadStats, String> {
        if self.ur.is_some() {
            self.run_uring()
        } else {
            self.run_epoll()
        }
    }

    /// The run's clock starts: the measured span after the warmup, and the first sends.
    pub(super) fn begin(&mut self) -> Result<(), String> {
        let t0 = clock::now();
        self.measure_start = t0 + self.plan.warmup_ns;
        self.measure_end = self.plan.duration_ns.map(|d| self.measure_start + d);
        if self.plan.warmup_ns == 0 {
            self.maybe_start_measuring(t0);
        }
        match self.plan.interval_ns {
            Some(iv) if self.plan.window().is_some() => self.start_ticks(t0, iv),
            Some(iv) => {
                self.start_open(t0, iv);
                Ok(())
            }
            None => (0..self.conns.len()).try_for_each(|i| self.next_closed(i, t0)),
        }
    }

    pub(super) fn maybe_start_measuring(&mut self, now: u64) {
        if !self.measuring && now >= self.measure_start {
            self.measuring = true;
            self.stats.start_measuring(self.measure_start);
        }
    }

    pub(super) fn quota_left(&self) -> Option<u64> {
        self.plan.quota.map(|q| q.saturating_sub(self.issued))
    }

    pub(super) fn finished(&self, now: u64) -> bool {
        let quota_done = self.measuring && self.quota_left() == Some(0) && self.inflight == 0;
        if let Some(end) = self.measure_end {
            if self.plan.window().is_some() {
                // memtier sends nothing after the deadline but drains what is in flight;
                // with both a deadline and a quota (--time-limit), whichever comes first.
                let drained = self.inflight == 0 || now >= end.saturating_add(self.plan.drain_ns);
                return quota_done || (now >= end && drained);
            }
            return now >= end;
        }
        quota_done
    }

    pub(super) fn finish(mut self, now: u64) -> ThreadStats {
        if self.plan.window().is_some() {
            return self.finish_window(now);
        }
        let end = self.measure_end.map_or(now, |e| e.min(now));
        self.count_unsent();
        self.stats.finish(end);
        self.stats
    }

    pub(super) fn timeout(&self, now: u64) -> Option<std::time::Duration> {
        let draining = self.plan.window().is_some() && self.measure_end.is_some_and(|e| now >= e);
        let drain = self.plan.drain_ns;
        let mut until = self.measure_end.map(|e| if draining { e.saturating_add(drain) } else { e });
        if !self.measuring {
            until = Some(until.map_or(self.measure_start, |u| u.min(self.measure_start)));
        }
        // --reconnect-on-error: wake for the next down connection's retry (a scan of the
        // connections, so only with the flag: the hot loop stays as it was without it)
        if self.plan.reconnect_ns.is_some() {
            if let Some(r) = self.conns.iter().filter_map(|c| c.rc.retry_at).min() {
                until = Some(until.map_or(r, |u| u.min(r)));
            }
        }
        until.map(|u| std::time::Duration::from_nanos(u.saturating_sub(now)))
    }

    /// Closed loop: issue the next batch (or window refill) on connection i if allowed.
    pub(super) fn next_closed(&mut self, i: usize, now: u64) -> Result<(), String> {
        if self.measure_end.is_some_and(|e| now >= e) {
            return Ok(());
        }
        if self.send_in_flight(i) {
            self.defer_until_sent(i);
            return Ok(());
        }
        if self.plan.window().is_some() {
            return self.refill_window(i, now);
        }
        let measured = now >= self.measure_start;
        let count = self.batch_size(measured);
        if count > 0 {
            self.send_batch(i, now, count, measured)?;
        }
        Ok(())
    }

    /// Open loop: sends what is due; returns the next intended time still to come
    /// (u64::MAX: none).
    pub(super) fn dispatch_open(&mut self, now: u64) -> Result<u64, String> {
        let Some(iv) = self.plan.interval_ns else { return Ok(u64::MAX) };
        if self.plan.window().is_some() {
            return self.tick_windows(now, iv);
        }
        self.dispatch_batches(now, iv)
    }

    /// Writes connection i's pending bytes (epoll), or queues them for the ring (io_uring).
    pub(super) fn flush_conn(&mut self, i: usize) -> Result<(), String> {
        if self.ur.is_some() {
            self.queue_send(i);
            return Ok(());
        }
        self.write_out(i)
    }

    pub(super) fn lost(&self, i: usize, why: String) -> String {
        let ep = &self.plan.endpoints[self.conns[i].node];
        format!("Error: connection to {ep} lost: {why}")
    }

    /// New bytes arrived on connection i: its complete replies, then (window mode) a refill.
    pub(super) fn on_bytes(&mut self, i: usize, now: u64) -> Result<(), String> {
        self.parse_replies(i, now)?;
        if self.plan.window().is_some() {
            self.refill_window(i, now)?;
        }
        Ok(())
    }

    fn parse_replies(&mut self, i: usize, now: u64) -> Result<(), String> {
        self.stats.timeline.lane = self.conns[i].home;
        loop {
            let c = &mut self.conns[i];
            if c.rc.is_down() {
                break;
            }
            let at = c.rpos;
            match resp::skip(&c.rbuf[at..c.rend]) {
                Ok(Some((len, kind))) => {
                    c.rpos += len;
                    self.on_reply(i, now, kind, at, len)?;
                }
                Ok(None) => break,
                Err(e) => return Err(self.lost(i, format!("protocol error: {}", e.0))),
            }
        }
        self.record_oks(i, now);
        let c = &mut self.conns[i];
        if c.rc.is_down() {
            return Ok(());
        }
        if c.rpos == c.rend {
            c.rpos = 0;
            c.rend = 0;
        }
        Ok(())
    }

    #[inline]
    fn on_reply(&mut self, i: usize, now: u64, kind: Kind, at: usize, len: usize) -> Result<(), String> {
        if kind == Kind::Push {
            return Ok(());
        }
        let c = &mut self.conns[i];
        if c.expected == 0 {
            let msg = format!("unexpected reply (conn {i}, busy {}, at {at}, buf {:?})", c.busy, String::from_utf8_lossy(&c.rbuf[..c.rend]));
            return Err(self.lost(i, msg));
        }
        if c.window.is_some() {
            return self.on_window_reply(i, now, kind, at, len);
        }
        self.on_batch_reply(i, now, kind, at)
    }

    /// Byte range in the write buffer of command `idx` of connection i's batch.
    pub(super) fn request_span(&self, i: usize, idx: usize) -> (usize, usize) {
        let c = &self.conns[i];
        if let Some(m) = &c.window {
            // window mode: the oldest request of the window is the one answered.
            let start = m.window.front().map_or(0, |r| r.1 as usize);
            let end = m.window.get(1).map_or(c.wlen, |r| r.1 as usize);
            return (start, end);
        }
        let Some(b) = self.plan.batches() else { return (0, 0) };
        let base = (idx / b.commands()) * b.instance_len();
        let (from, to) = b.span(idx % b.commands());
        (base + from, base + to)
    }

    /// The index in its batch of the command connection i's latest reply answers (None
    /// in window mode, or before any).
    pub(super) fn answered_index(&self, i: usize) -> Option<usize> {
        let b = self.plan.batches()?;
        let c = &self.conns[i];
        (c.wlen / b.instance_len().max(1) * b.commands()).checked_sub(c.expected + 1)
    }

    /// MOVED: move the slot to the named node in this thread's slot map.
    pub(super) fn on_moved(&mut self, i: usize, start: usize, end: usize) {
        let c = &self.conns[i];
        let Some((slot, host, port)) = slots::parse_redirect(&c.rbuf[start..end]) else { return };
        if self.plan.read_route.is_some() {
            return; // shards are fixed for a replica read test; the error reply is counted
        }
        let target = self.plan.endpoints.iter().position(|e| *e == Endpoint::Tcp(host.clone(), port));
        let Some(target) = target else { return };
        for (n, list) in self.slots.iter_mut().enumerate() {
            if n != target && list.len() > 1 {
                if let Some(p) = list.iter().position(|&s| s == slot) {
                    list.swap_remove(p);
                }
            }
        }
        if !self.slots[target].contains(&slot) {
            self.slots[target].push(slot);
        }
        if let Some(o) = self.owner.get_mut(slot as usize) {
            *o = target as u16;
        }
    }

    /// ASK: send ASKING + the same command to the named node (blocking side
    /// connection, cached per node). Returns true if the retried command succeeded.
    pub(super) fn retry_ask(&mut self, i: usize, start: usize, end: usize) -> Result<bool, String> {
        let c = &self.conns[i];
        let Some((_, host, port)) = slots::parse_redirect(&c.rbuf[start..end]) else { return Ok(false) };
        let idx = match &c.window {
            Some(_) => 0,
            None => self.asked_index(i),
        };
        let (from, to) = self.request_span(i, idx);
        let mut req = b"*1\r\n$6\r\nASKING\r\n".to_vec();
        req.extend_from_slice(&self.conns[i].wbuf[from..to]);
        let ep = Endpoint::Tcp(host, port);
        let pos = match self.ask_conns.iter().position(|(e, _)| *e == ep) {
            Some(p) => p,
            None => {
                let b = transport::Blocking::open(&ep, &self.plan.connect)?;
                self.ask_conns.push((ep, b));
                self.ask_conns.len() - 1
            }
        };
        let replies = self.ask_conns[pos].1.call(&req, 2)?;
        Ok(!matches!(replies.last(), Some(resp::Value::Error(_)) | None))
    }

    /// Batch mode: the index in its batch of the command an ASK answered.
    fn asked_index(&self, i: usize) -> usize {
        let Some(b) = self.plan.batches() else { return 0 };
        let c = &self.conns[i];
        c.wlen / b.instance_len().max(1) * b.commands() - c.expected - 1
    }

    /// -k 0 (and memtier's --reconnect-interval): replace connection i's socket.
    pub(super) fn reconnect(&mut self, i: usize) -> Result<(), String> {
        let node = self.conns[i].node;
        let mut s = transport::connect(&self.plan.endpoints[node], self.plan.connect_for(node))?;
        if self.ur.is_some() {
            s.set_blocking()?;
            let (old, new) = (self.conns[i].stream.raw_fd(), s.raw_fd());
            self.uring_replace(i, old, new)?;
        } else {
            let _ = self.poll.registry().deregister(self.conns[i].stream.source());
            register(&self.poll, &mut s, i)?;
        }
        let c = &mut self.conns[i];
        c.stream = s;
        c.want_write = false;
        c.rpos = 0;
        c.rend = 0;
        Ok(())
    }
}
