//! net: one shared-nothing event loop per thread over its connections.
//! Closed loop: each connection sends a batch of P, waits for P replies, repeats.
//! Open loop: each connection follows an intended-send schedule (wrk2-style).

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Barrier};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use crate::base::clock::{self, Timer};
use crate::workload::dataset::DataPlan;
use crate::base::event_loop::IoKind;
use crate::frontend::memtier::program::{Client, Pending, Program};
use crate::base::slots;
use crate::engine::route::{self, ReadRoute, Route};
use crate::base::resp::{self, ErrClass, Kind};
use crate::base::schedule;
use crate::engine::reconnect;
use crate::workload::spec::Template;
use crate::engine::stats::{CmdStats, ThreadStats};
use crate::base::transport::{self, ConnectSpec, Endpoint, Stream};
use crate::base::rng::Rng;
use crate::workload::keys::{patch_rand, patch_rand_routed, patch_tags, KeyGen};

use super::uring_loop;

const TIMER: Token = Token(usize::MAX - 1);
const LATE_NS: u64 = 1_000_000;
/// memtier mode: after --test-time, replies to the requests still in flight are waited
/// for (memtier drains them) at most this long; any still missing then are reported.
pub const DRAIN_LIMIT_NS: u64 = 30_000_000_000;
const RBUF: usize = 64 * 1024;

/// Everything one thread needs to run one test.
pub struct Plan {
    pub endpoints: Vec<Endpoint>,
    /// Per connection of this thread: (node index, global connection index).
    pub conns: Vec<(usize, usize)>,
    pub total_clients: usize,
    pub connect: ConnectSpec,
    pub template: Arc<Template>,
    pub pipeline: usize,
    /// Measured commands this thread issues; None when time-bounded.
    pub quota: Option<u64>,
    pub duration_ns: Option<u64>,
    pub warmup_ns: u64,
    /// Open loop: interval between batches on each connection (the mean gap with `poisson`).
    pub interval_ns: Option<u64>,
    /// Open loop: exponential gaps of mean `interval_ns` (Poisson arrivals) instead of a grid.
    pub poisson: bool,
    pub keys: KeyGen,
    /// Cluster: slots per node and a tag per slot.
    pub slots: Vec<Vec<u16>>,
    pub tags: Arc<Vec<[u8; 3]>>,
    /// Cluster routing of the template's key (connections' nodes are already in `conns`).
    pub route: Route,
    pub keepalive: bool,
    pub sigfig: u8,
    /// --reconnect-on-error: first backoff (ns); `endpoints` then lists the fallbacks
    /// after the seed (see `reconnect`). None: a lost connection ends the run.
    pub reconnect_ns: Option<u64>,
    /// --ack-log: keep the key of every acknowledged command (`timeline::Timeline::acks`).
    pub ack_log: bool,
    /// memtier mode: requests come from this program instead of `template`.
    pub memtier: Option<MtPlan>,
    /// The event loop (resolved once per run, see `io::resolve`).
    pub io: IoKind,
    /// --dataset: requests written per batch from dataset rows instead of patching `template`.
    pub dataset: Option<Arc<DataPlan>>,
    /// --read-from-replicas: endpoints are shards' primaries and replicas (None: primaries).
    pub read_route: Option<Arc<ReadRoute>>,
}

impl Plan {
    /// The shard of endpoint `node` (the endpoint itself without a read route).
    #[inline]
    pub(super) fn shard(&self, node: usize) -> usize {
        self.read_route.as_ref().map_or(node, |r| r.shard_of[node])
    }

    /// How connections to endpoint `node` start (READONLY first on cluster replicas).
    pub(super) fn connect_for(&self, node: usize) -> &ConnectSpec {
        match &self.read_route {
            Some(r) if r.replica[node] => &r.readonly,
            _ => &self.connect,
        }
    }

    /// Slot lists the slot-ownership table is built from: per shard with a read route.
    pub(super) fn owner_slots(&self) -> &[Vec<u16>] {
        self.read_route.as_ref().map_or(&self.slots, |r| &r.shard_slots)
    }
}

/// A memtier run's share of one thread: the program, its clients and which client
/// each connection belongs to (one connection per client; one per client and primary
/// in cluster mode, as memtier opens them).
pub struct MtPlan {
    pub program: Arc<Program>,
    pub clients: Vec<Client>,
    /// Per entry of `Plan::conns`: its client's index in `clients`.
    pub conn_client: Vec<usize>,
    /// Requests per client (memtier's -n); None when time-bounded.
    pub client_quota: Option<u64>,
    /// --rate-limiting: requests a connection may send per tick of `Plan::interval_ns`
    /// (memtier's `request_per_interval`); None: as fast as the window allows.
    pub per_tick: Option<u32>,
    /// memtier's --thread-conn-start-{min,max}-jitter-micros: after each client's
    /// connections but the last, the thread pauses a draw in [min, max] µs (max 0: never).
    pub connect_jitter_us: (u32, u32),
    /// memtier's --reconnect-interval: a client's window never reaches past its next
    /// multiple of N answered requests, and its connection is replaced when it gets there.
    pub reconnect_every: Option<u64>,
}

/// Per-client memtier state.
pub(super) struct MtClient {
    pub(super) client: Client,
    /// Cluster mode: requests drawn for each primary's connection, not sent yet.
    pub(super) queues: Vec<VecDeque<Pending>>,
    /// Requests it may still draw (its -n; u64::MAX when time-bounded).
    pub(super) budget: u64,
    pub(super) answered: u64,
    /// memtier's end time of this client: the first reply read at or after the
    /// --test-time deadline, or the reply that completed its -n requests. Replies
    /// to requests still in flight then are counted, but do not move it.
    pub(super) end: Option<u64>,
}

/// Per-connection memtier state. memtier keeps `--pipeline` requests in flight on
/// each connection, refilling as replies arrive (a sliding window, not batches).
pub(super) struct MtConn {
    /// Index of its client in `Worker::mt_clients`.
    pub(super) client: usize,
    /// In-flight requests, oldest first: (command index, start of its bytes in
    /// wbuf, send time). Capacity = pipeline, so pushing never allocates.
    pub(super) window: VecDeque<(u16, u32, u64)>,
    /// --rate-limiting: requests it may still send in this tick (u32::MAX: no limit).
    pub(super) left: u32,
}

pub(super) struct Conn {
    pub(super) stream: Stream,
    pub(super) node: usize,
    /// The node it started on: its lane in the timeline (a cluster shard's connections
    /// keep theirs when a failover moves them to the shard's new primary).
    pub(super) home: usize,
    pub(super) wbuf: Vec<u8>,
    pub(super) wlen: usize,
    pub(super) written: usize,
    pub(super) rbuf: Vec<u8>,
    pub(super) rpos: usize,
    pub(super) rend: usize,
    pub(super) expected: usize,
    pub(super) sent: u64,
    pub(super) intended: u64,
    pub(super) measured: bool,
    pub(super) busy: bool,
    pub(super) next_due: u64,
    /// Registered for WRITABLE too (only while a write is blocked).
    pub(super) want_write: bool,
    pub(super) mt: Option<MtConn>,
    /// --reconnect-on-error: down / backoff state.
    pub(super) rc: reconnect::ConnState,
}

pub(super) struct Worker<'a> {
    pub(super) plan: &'a Plan,
    pub(super) poll: Poll,
    pub(super) conns: Vec<Conn>,
    pub(super) stats: ThreadStats,
    pub(super) keys: KeyGen,
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
    pub(super) ur: Option<Box<uring_loop::UringState>>,
    /// memtier mode: this thread's clients (see `MtPlan`).
    pub(super) mt_clients: Vec<MtClient>,
    /// `Plan::poisson`: the draws of the gaps between intended send times.
    pub(super) arrivals: Rng,
}

pub(super) fn fatal(msg: String) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}

pub(super) fn register(poll: &Poll, s: &mut Stream, i: usize) -> Result<(), String> {
    poll.registry()
        .register(s.source(), Token(i), Interest::READABLE)
        .map_err(|e| format!("register: {e}"))
}

/// Appends received bytes to a connection's read buffer (compacting, or growing
/// for a reply larger than the buffer).
pub(super) fn append(c: &mut Conn, data: &[u8]) {
    if c.rend + data.len() > c.rbuf.len() {
        c.rbuf.copy_within(c.rpos..c.rend, 0);
        c.rend -= c.rpos;
        c.rpos = 0;
        if c.rend + data.len() > c.rbuf.len() {
            let n = (c.rend + data.len()).next_power_of_two();
            c.rbuf.resize(n, 0);
        }
    }
    c.rbuf[c.rend..c.rend + data.len()].copy_from_slice(data);
    c.rend += data.len();
}

/// memtier: a thread pauses between creating two clients (--thread-conn-start-*-jitter-
/// micros), here before the first connection of every client but the thread's first.
fn connect_pause(plan: &Plan, i: usize, rng: &mut crate::base::rng::Rng) {
    let Some(m) = &plan.memtier else { return };
    let (lo, hi) = m.connect_jitter_us;
    let first_of_client = i > 0 && m.conn_client.get(i) != m.conn_client.get(i - 1);
    if hi > 0 && first_of_client {
        let us = u64::from(lo) + rng.below(u64::from(hi - lo) + 1);
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// Connects this thread's share, waits at the barrier, runs, returns stats.
pub fn run(plan: &Plan, barrier: &Barrier) -> ThreadStats {
    let w = Worker::new(plan).unwrap_or_else(|e| fatal(e));
    barrier.wait();
    w.run().unwrap_or_else(|e| fatal(e))
}

impl<'a> Worker<'a> {
    pub(super) fn new(plan: &'a Plan) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let mut conns = Vec::with_capacity(plan.conns.len());
        let uring = plan.io == IoKind::Uring;
        let mut jitter = crate::base::rng::Rng::new(plan.conns.first().map_or(0, |c| c.1 as u64));
        for (i, &(node, _)) in plan.conns.iter().enumerate() {
            connect_pause(plan, i, &mut jitter);
            let mut stream = transport::connect(&plan.endpoints[node], plan.connect_for(node))?;
            if uring {
                stream.set_blocking()?;
            } else {
                register(&poll, &mut stream, i)?;
            }
            let (wbuf, mt) = match &plan.memtier {
                Some(m) => {
                    let client = *m.conn_client.get(i).ok_or("internal error: no memtier client for a connection")?;
                    let window = VecDeque::with_capacity(plan.pipeline);
                    let left = m.per_tick.unwrap_or(u32::MAX);
                    (Vec::with_capacity(plan.pipeline * m.program.max_request_len()), Some(MtConn { client, window, left }))
                }
                None => match &plan.dataset {
                    // Sized once for the longest request: never grows, so io_uring's
                    // registered buffer stays valid.
                    Some(d) => (vec![0u8; plan.pipeline * d.t.max_len()], None),
                    None => (plan.template.bytes.repeat(plan.pipeline), None),
                },
            };
            conns.push(Conn {
                stream,
                node,
                home: node,
                wbuf,
                wlen: 0,
                written: 0,
                rbuf: vec![0u8; RBUF],
                rpos: 0,
                rend: 0,
                expected: 0,
                sent: 0,
                intended: 0,
                measured: false,
                busy: false,
                next_due: 0,
                want_write: false,
                mt,
                rc: reconnect::ConnState::default(),
            });
        }
        let ur = if uring {
            let fds: Vec<i32> = conns.iter().map(|c| c.stream.raw_fd()).collect();
            let bufs: Vec<(usize, usize)> = conns.iter().map(|c| (c.wbuf.as_ptr() as usize, c.wbuf.capacity())).collect();
            Some(Box::new(uring_loop::UringState::new(&fds, &bufs)?))
        } else {
            None
        };
        let timer = match plan.interval_ns {
            Some(_) if !uring => {
                let t = Timer::new()?;
                poll.registry()
                    .register(&mut SourceFd(&t.fd), TIMER, Interest::READABLE)
                    .map_err(|e| format!("register timer: {e}"))?;
                Some(t)
            }
            _ => None,
        };
        let mut keys = plan.keys.clone();
        let sampled = plan.route == Route::Sampled;
        if sampled {
            keys.set_lanes(plan.owner_slots().len());
        }
        // memtier's rate limit is no open loop: latency from the send, as memtier's
        let mut stats = ThreadStats::new(plan.sigfig, plan.interval_ns.is_some() && plan.memtier.is_none());
        stats.timeline = crate::engine::timeline::Timeline::new(plan.reconnect_ns.is_some());
        if plan.ack_log {
            stats.timeline.acks = Some(Vec::new());
        }
        let mut mt_clients = Vec::new();
        if let Some(m) = &plan.memtier {
            stats.cmds = vec![CmdStats::new(plan.sigfig); m.program.stats.len()];
            let queues = if plan.route == Route::Sampled { plan.endpoints.len() } else { 0 };
            mt_clients = m
                .clients
                .iter()
                .map(|c| MtClient { client: c.clone(), queues: vec![VecDeque::new(); queues], budget: m.client_quota.unwrap_or(u64::MAX), answered: 0, end: None })
                .collect();
        }
        Ok(Worker {
            plan,
            poll,
            conns,
            stats,
            keys,
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
            mt_clients,
            arrivals: Rng::new(plan.keys.rng.clone().next() ^ 0x5851_f42d_4c95_7f2d),
        })
    }

    /// The gap to a connection's next intended send: `iv`, or an exponential draw of
    /// mean `iv` with Poisson arrivals.
    pub(super) fn gap(&mut self, iv: u64) -> u64 {
        if self.plan.poisson {
            schedule::exp_gap_ns(iv, self.arrivals.next())
        } else {
            iv
        }
    }

    pub(super) fn run(mut self) -> Result<ThreadStats, String> {
        if self.ur.is_some() {
            return self.run_uring();
        }
        let t0 = clock::now();
        self.measure_start = t0 + self.plan.warmup_ns;
        self.measure_end = self.plan.duration_ns.map(|d| self.measure_start + d);
        self.start(t0)?;
        let mut events = Events::with_capacity(1024);
        loop {
            let now = clock::now();
            self.maybe_start_measuring(now);
            if self.finished(now) {
                return Ok(self.finish(now));
            }
            self.revive_due(now)?;
            if self.plan.interval_ns.is_some() {
                let due = self.dispatch_open(now)?;
                if let (Some(t), true) = (self.timer.as_mut(), due != u64::MAX) {
                    t.arm_at(due);
                }
            }
            let timeout = self.timeout(now);
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("poll: {e}")),
            }
            for ev in events.iter() {
                if ev.token() == TIMER {
                    if let Some(t) = self.timer.as_mut() {
                        t.drain();
                    }
                    continue;
                }
                let i = ev.token().0;
                if self.conns[i].rc.is_down() {
                    continue;
                }
                if ev.is_writable() {
                    self.flush_conn(i)?;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.on_readable(i)?;
                }
            }
        }
    }

    pub(super) fn start(&mut self, t0: u64) -> Result<(), String> {
        if self.plan.warmup_ns == 0 {
            self.maybe_start_measuring(t0);
        }
        match self.plan.interval_ns {
            Some(iv) if self.plan.memtier.is_some() => {
                // memtier: a connection sends its first tick's requests once connected
                for i in 0..self.conns.len() {
                    self.conns[i].next_due = t0 + iv;
                    self.next_closed(i, t0)?;
                }
            }
            Some(iv) if self.plan.poisson => {
                for i in 0..self.conns.len() {
                    self.conns[i].next_due = t0 + self.gap(iv);
                }
            }
            Some(iv) => {
                for (c, &(_, g)) in self.conns.iter_mut().zip(&self.plan.conns) {
                    c.next_due = schedule::first_due(t0, iv, g, self.plan.total_clients);
                }
            }
            None => {
                for i in 0..self.conns.len() {
                    self.next_closed(i, t0)?;
                }
            }
        }
        Ok(())
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
        if let Some(end) = self.measure_end {
            if self.plan.memtier.is_some() {
                // memtier sends nothing after the deadline but drains what is in flight.
                return now >= end && (self.inflight == 0 || now >= end + DRAIN_LIMIT_NS);
            }
            return now >= end;
        }
        self.measuring && self.quota_left() == Some(0) && self.inflight == 0
    }

    pub(super) fn finish(mut self, now: u64) -> ThreadStats {
        if self.plan.memtier.is_some() {
            return self.finish_memtier(now);
        }
        let end = self.measure_end.map_or(now, |e| e.min(now));
        if let (Some(iv), Some(e)) = (self.plan.interval_ns, self.measure_end) {
            let per_batch = (self.plan.pipeline * self.plan.template.ncmds) as u64;
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
        self.stats.finish(end);
        self.stats
    }

    /// memtier mode: the drain is part of the run (its replies counted); the rate's
    /// time is each client's own end (see `MtConn::end`), summed for the mean.
    pub(super) fn finish_memtier(mut self, now: u64) -> ThreadStats {
        for m in &self.mt_clients {
            let end = m.end.unwrap_or(now);
            self.stats.client_time_ns += u128::from(end.saturating_sub(self.measure_start));
            self.stats.clients += 1;
        }
        self.stats.undrained = self.inflight;
        self.stats.finish(now);
        self.stats
    }

    pub(super) fn timeout(&self, now: u64) -> Option<std::time::Duration> {
        let draining = self.plan.memtier.is_some() && self.measure_end.is_some_and(|e| now >= e);
        let mut until = self.measure_end.map(|e| if draining { e + DRAIN_LIMIT_NS } else { e });
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

    /// Closed loop: issue the next batch on connection i if allowed.
    pub(super) fn next_closed(&mut self, i: usize, now: u64) -> Result<(), String> {
        if self.measure_end.is_some_and(|e| now >= e) {
            return Ok(());
        }
        if self.send_in_flight(i) {
            self.defer_until_sent(i);
            return Ok(());
        }
        if self.plan.memtier.is_some() {
            return self.refill_memtier(i, now);
        }
        let measured = now >= self.measure_start;
        let count = self.batch_size(measured);
        if count > 0 {
            self.send_batch(i, now, count, measured)?;
        }
        Ok(())
    }

    /// Instances of the template to put in the next batch.
    pub(super) fn batch_size(&self, measured: bool) -> usize {
        let p = self.plan.pipeline;
        match (measured, self.quota_left()) {
            (true, Some(left)) => {
                let k = self.plan.template.ncmds as u64;
                (left.div_ceil(k) as usize).min(p)
            }
            _ => p,
        }
    }

    /// Open loop: send every idle connection whose intended time has come; returns
    /// the next intended time still to come (u64::MAX: none).
    pub(super) fn dispatch_open(&mut self, now: u64) -> Result<u64, String> {
        let Some(iv) = self.plan.interval_ns else { return Ok(u64::MAX) };
        if self.plan.memtier.is_some() {
            return self.tick_memtier(now, iv);
        }
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
            let measured = due >= self.measure_start;
            let count = self.batch_size(measured);
            if count == 0 {
                continue;
            }
            self.conns[i].next_due = due + self.gap(iv);
            self.send_batch(i, due, count, measured)?;
            let c = &self.conns[i];
            if measured && c.sent > due + LATE_NS {
                self.stats.late += (count * self.plan.template.ncmds) as u64;
            }
        }
        Ok(earliest)
    }

    /// memtier's --rate-limiting: at each tick of a connection's timer its allowance is
    /// reset to `per_tick` (unused requests are not carried over, a late tick does not
    /// catch up) and its window refilled; returns the next tick still to come.
    pub(super) fn tick_memtier(&mut self, now: u64, iv: u64) -> Result<u64, String> {
        let per_tick = self.plan.memtier.as_ref().and_then(|m| m.per_tick).unwrap_or(u32::MAX);
        let mut earliest = u64::MAX;
        for i in 0..self.conns.len() {
            let due = self.conns[i].next_due;
            if due <= now {
                let next = due + iv;
                self.conns[i].next_due = if next > now { next } else { now + iv };
                if let Some(m) = self.conns[i].mt.as_mut() {
                    m.left = per_tick;
                }
                self.next_closed(i, now)?;
            }
            earliest = earliest.min(self.conns[i].next_due);
        }
        Ok(earliest)
    }

    pub(super) fn send_batch(&mut self, i: usize, intended: u64, count: usize, measured: bool) -> Result<(), String> {
        self.fill_template(i, count);
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

    /// memtier mode: tops connection i's window up to `pipeline` requests in
    /// flight (within its client's -n and the deadline) and writes them out. The
    /// bytes of answered requests are dropped from the front of the buffer first,
    /// so it holds at most `pipeline` requests and never grows. In cluster mode the
    /// requests are its client's for this connection's primary (`write_for_node`).
    pub(super) fn refill_memtier(&mut self, i: usize, now: u64) -> Result<(), String> {
        let Some(mp) = self.plan.memtier.as_ref() else { return Ok(()) };
        if self.measure_end.is_some_and(|e| now >= e) {
            return Ok(());
        }
        if self.send_in_flight(i) {
            self.defer_until_sent(i);
            return Ok(());
        }
        let p = &mp.program;
        let cluster = self.plan.route == Route::Sampled;
        let Worker { conns, mt_clients, stats, owner, .. } = self;
        let c = &mut conns[i];
        let Some(m) = c.mt.as_mut() else { return Ok(()) };
        let Some(cl) = mt_clients.get_mut(m.client) else { return Ok(()) };
        let mut room = (self.plan.pipeline - m.window.len()).min(m.left as usize);
        if let Some(n) = mp.reconnect_every {
            // memtier's hold_pipeline: answered % N + in flight stays below N
            room = room.min((n - cl.answered % n).saturating_sub(m.window.len() as u64) as usize);
        }
        if room == 0 || (!cluster && cl.budget == 0) {
            return Ok(());
        }
        let keep = m.window.front().map_or(c.wlen, |r| r.1 as usize);
        if keep > 0 {
            c.wbuf.copy_within(keep..c.wlen, 0);
            c.wbuf.truncate(c.wlen - keep);
            c.wlen -= keep;
            c.written = c.written.saturating_sub(keep);
            m.window.iter_mut().for_each(|r| r.1 -= keep as u32);
        }
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
            m.window.push_back((ci as u16, start as u32, sent));
            stats.cmds[p.cmds[ci].stat].bytes_tx += (c.wbuf.len() - start) as u64;
            added += 1;
        }
        if added == 0 {
            return Ok(());
        }
        if m.left != u32::MAX {
            m.left -= added as u32;
        }
        c.wlen = c.wbuf.len();
        c.expected += added;
        c.busy = true;
        c.measured = true;
        self.issued += added as u64;
        self.inflight += added as u64;
        self.flush_conn(i)
    }

    pub(super) fn fill_template(&mut self, i: usize, count: usize) {
        let t = &self.plan.template;
        let c = &mut self.conns[i];
        if let Some(d) = &self.plan.dataset {
            c.wlen = d.fill(&mut c.wbuf, count, &mut self.keys);
            c.written = 0;
            c.expected = count * t.ncmds;
            return;
        }
        if self.plan.route == Route::Sampled {
            patch_rand_routed(&mut c.wbuf, t, count, &mut self.keys, &self.owner, self.plan.shard(c.node), self.max_tries);
        } else {
            patch_rand(&mut c.wbuf, t, count, &mut self.keys);
        }
        if !t.tags.is_empty() {
            let slots = &self.slots[c.node];
            if !slots.is_empty() {
                let slot = slots[self.keys.rng.below(slots.len() as u64) as usize];
                patch_tags(&mut c.wbuf, t, count, &self.plan.tags[slot as usize]);
            }
        }
        c.wlen = count * t.bytes.len();
        c.written = 0;
        c.expected = count * t.ncmds;
    }

    pub(super) fn flush_conn(&mut self, i: usize) -> Result<(), String> {
        if self.ur.is_some() {
            self.queue_send(i);
            return Ok(());
        }
        let c = &mut self.conns[i];
        let mut blocked = false;
        while c.written < c.wlen {
            match c.stream.write(&c.wbuf[c.written..c.wlen]) {
                Ok(0) => return self.fail(i, "write returned 0".into()),
                Ok(n) => c.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    blocked = true;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(i, e.to_string()),
            }
        }
        match c.stream.flush() {
            Ok(pending) => blocked |= pending,
            Err(e) => return self.fail(i, e.to_string()),
        }
        if blocked != c.want_write {
            c.want_write = blocked;
            let interest = if blocked { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
            self.poll
                .registry()
                .reregister(c.stream.source(), Token(i), interest)
                .map_err(|e| format!("reregister: {e}"))?;
        }
        Ok(())
    }

    pub(super) fn lost(&self, i: usize, why: String) -> String {
        let ep = &self.plan.endpoints[self.conns[i].node];
        format!("Error: connection to {ep} lost: {why}")
    }

    pub(super) fn on_readable(&mut self, i: usize) -> Result<(), String> {
        loop {
            let c = &mut self.conns[i];
            if c.rend == c.rbuf.len() {
                if c.rpos > 0 {
                    c.rbuf.copy_within(c.rpos..c.rend, 0);
                    c.rend -= c.rpos;
                    c.rpos = 0;
                } else {
                    let n = c.rbuf.len() * 2;
                    c.rbuf.resize(n, 0);
                }
            }
            let space = c.rbuf.len() - c.rend;
            let n = match c.stream.read(&mut c.rbuf[c.rend..]) {
                Ok(0) => return self.fail(i, "server closed the connection".into()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(i, e.to_string()),
            };
            c.rend += n;
            let tls = c.stream.is_tls();
            let now = clock::now();
            self.parse_replies(i, now)?;
            if self.plan.memtier.is_some() {
                self.refill_memtier(i, now)?;
            }
            if self.conns[i].rc.is_down() {
                return Ok(());
            }
            if n < space && !tls {
                return Ok(());
            }
        }
    }

    pub(super) fn parse_replies(&mut self, i: usize, now: u64) -> Result<(), String> {
        self.stats.timeline.lane = self.conns[i].home;
        loop {
            let c = &mut self.conns[i];
            if c.rc.is_down() {
                return Ok(());
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
        let c = &mut self.conns[i];
        if c.rpos == c.rend {
            c.rpos = 0;
            c.rend = 0;
        }
        Ok(())
    }

    #[inline]
    pub(super) fn on_reply(&mut self, i: usize, now: u64, kind: Kind, at: usize, len: usize) -> Result<(), String> {
        if kind == Kind::Push {
            return Ok(());
        }
        let c = &mut self.conns[i];
        if c.expected == 0 {
            let msg = format!("unexpected reply (conn {i}, busy {}, at {at}, buf {:?})", c.busy, String::from_utf8_lossy(&c.rbuf[..c.rend]));
            return Err(self.lost(i, msg));
        }
        if c.mt.is_some() {
            return self.on_memtier_reply(i, now, kind, at, len);
        }
        c.expected -= 1;
        let (measured, intended, sent, done) = (c.measured, c.intended, c.sent, c.expected == 0);
        if measured {
            self.inflight -= 1;
        }
        match kind {
            Kind::Error { class, start, end } => {
                if measured {
                    self.stats.record_error(now, class);
                    self.stats.note_error(class, &self.conns[i].rbuf[at + start..at + end]);
                }
                self.note_error_kind(i, now, measured, at + start, at + end);
                if class == ErrClass::Moved {
                    self.on_moved(i, at + start, at + end);
                    if self.plan.reconnect_ns.is_some() && self.clustered() {
                        // its node gave the slots away (a failover): back on their owner
                        self.conns[i].rc.pending = Some(reconnect::After::Retry);
                    }
                }
                if class == ErrClass::Ask && self.retry_ask(i, at + start, at + end)? && measured {
                    let t = clock::now();
                    self.stats.record(t, t.saturating_sub(intended), t.saturating_sub(sent));
                }
            }
            _ if measured => {
                self.conns[i].rc.ok();
                self.stats.record(now, now.saturating_sub(intended), now.saturating_sub(sent));
                if self.stats.timeline.acks.is_some() {
                    self.log_ack(i);
                }
            }
            _ => self.conns[i].rc.ok(),
        }
        if done {
            self.conns[i].busy = false;
            if let Some(how) = self.conns[i].rc.pending {
                return self.take_down(i, now, how);
            }
            if !self.plan.keepalive {
                self.reconnect(i)?;
            }
            if self.plan.interval_ns.is_none() {
                self.next_closed(i, now)?;
            }
        }
        Ok(())
    }

    /// memtier mode: the reply (`len` bytes at `at`) to the oldest request in
    /// connection i's window; latency from that request's own send time. The
    /// window is refilled after the read (see `on_readable`).
    pub(super) fn on_memtier_reply(&mut self, i: usize, now: u64, kind: Kind, at: usize, len: usize) -> Result<(), String> {
        let Some(mp) = self.plan.memtier.as_ref() else { return Ok(()) };
        let c = &mut self.conns[i];
        let Some(&(ci, _, sent)) = c.mt.as_ref().and_then(|m| m.window.front()) else {
            return Err(self.lost(i, "reply without a request".into()));
        };
        c.expected -= 1;
        c.busy = c.expected > 0;
        self.inflight -= 1;
        let mut latency = None;
        match kind {
            Kind::Error { class, start, end } => {
                self.stats.record_error(now, class);
                self.stats.note_error(class, &self.conns[i].rbuf[at + start..at + end]);
                if class == ErrClass::Moved {
                    self.on_moved(i, at + start, at + end);
                }
                if class == ErrClass::Ask && self.retry_ask(i, at + start, at + end)? {
                    let t = clock::now();
                    self.stats.record(t, t - sent, t - sent);
                    latency = Some(t - sent);
                }
            }
            _ => {
                self.stats.record(now, now.saturating_sub(sent), now.saturating_sub(sent));
                latency = Some(now.saturating_sub(sent));
            }
        }
        let c = &mut self.conns[i];
        let Some(m) = c.mt.as_mut() else { return Ok(()) };
        let Some(cl) = self.mt_clients.get_mut(m.client) else { return Ok(()) };
        let ci = ci as usize;
        let hit = mp.program.on_reply(&mut cl.client, ci, &c.rbuf[at..at + len]);
        self.stats.record_cmd(mp.program.cmds[ci].stat, latency.unwrap_or(0), len, hit, latency.is_none());
        m.window.pop_front();
        cl.answered += 1;
        let done = match (self.measure_end, mp.client_quota) {
            (Some(e), _) => now >= e,
            (None, Some(q)) => cl.answered >= q,
            (None, None) => false,
        };
        if done && cl.end.is_none() {
            cl.end = Some(now);
        }
        let reconnect = mp.reconnect_every.is_some_and(|n| cl.answered % n == 0) && !done;
        if reconnect && m.window.is_empty() {
            self.reconnect(i)?;
        }
        Ok(())
    }

    /// Byte range in the write buffer of command `idx` of connection i's batch.
    pub(super) fn request_span(&self, i: usize, idx: usize) -> (usize, usize) {
        let c = &self.conns[i];
        if let Some(m) = &c.mt {
            // memtier: the oldest request of the window is the one answered.
            let start = m.window.front().map_or(0, |r| r.1 as usize);
            let end = m.window.get(1).map_or(c.wlen, |r| r.1 as usize);
            return (start, end);
        }
        let t = &self.plan.template;
        let base = (idx / t.ncmds) * t.bytes.len();
        let k = idx % t.ncmds;
        (base + t.cmd_starts[k] as usize, base + t.cmd_starts[k + 1] as usize)
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
        let t = &self.plan.template;
        let idx = match &c.mt {
            Some(_) => 0,
            None => c.wlen / t.bytes.len().max(1) * t.ncmds - c.expected - 1,
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

    /// -k 0: replace the connection after each batch.
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
