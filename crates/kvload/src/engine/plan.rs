//! plan: what one thread runs — the nodes and its connections to them, how requests are
//! timed (closed loop, or open loop on a schedule; bounded by a count or by seconds) and
//! what they are (`Requests`). The front ends compile their options into plans.

use std::sync::Arc;

use crate::base::event_loop::IoKind;
use crate::base::transport::{ConnectSpec, Endpoint};
use crate::engine::route::{ReadRoute, Route};
use crate::engine::source::{Batches, Window};

/// Window mode: after --test-time, replies to the requests still in flight are waited for
/// (memtier drains them) at most this long; any still missing then are reported.
pub const DRAIN_LIMIT_NS: u64 = 30_000_000_000;

/// Window mode after a --time-limit: every reply in flight is waited for (the requests are
/// a request-bound run's own, each as it would have been answered without the limit).
pub const DRAIN_ALL_NS: u64 = u64::MAX / 4;

/// Everything one thread needs to run one test.
pub struct Plan<B: Batches, W: Window> {
    pub endpoints: Vec<Endpoint>,
    /// Per connection of this thread: (node index, global connection index).
    pub conns: Vec<(usize, usize)>,
    pub total_clients: usize,
    pub connect: ConnectSpec,
    pub pipeline: usize,
    /// Measured commands this thread issues; None when time-bounded.
    pub quota: Option<u64>,
    pub duration_ns: Option<u64>,
    /// Window mode: how long replies in flight at `duration_ns` are waited for.
    pub drain_ns: u64,
    pub warmup_ns: u64,
    /// Open loop: interval between batches on each connection (the mean gap with `poisson`).
    pub interval_ns: Option<u64>,
    /// Open loop: exponential gaps of mean `interval_ns` (Poisson arrivals) instead of a grid.
    pub poisson: bool,
    /// The seed of the Poisson arrivals' draws.
    pub arrivals_seed: u64,
    /// Cluster: slots per node.
    pub slots: Vec<Vec<u16>>,
    /// Cluster routing of the requests' keys (connections' nodes are already in `conns`).
    pub route: Route,
    pub keepalive: bool,
    pub sigfig: u8,
    /// --reconnect-on-error: first backoff (ns); `endpoints` then lists the fallbacks
    /// after the seed (see `reconnect`). None: a lost connection ends the run.
    pub reconnect_ns: Option<u64>,
    /// --ack-log: keep the key of every acknowledged command (`timeline::Timeline::acks`).
    pub ack_log: bool,
    /// The event loop (resolved once per run, see `event_loop::resolve`).
    pub io: IoKind,
    /// --read-from-replicas: endpoints are shards' primaries and replicas (None: primaries).
    pub read_route: Option<Arc<ReadRoute>>,
    pub requests: Requests<B, W>,
}

/// What a thread's connections send.
pub enum Requests<B: Batches, W: Window> {
    /// Batches of `pipeline` instances, the varying parts drawn from `keys`.
    Batches { source: B, keys: B::Keys },
    /// Windows of single requests from per-client streams.
    Window(WindowPlan<W>),
}

/// A window-mode run's share of one thread: the source, its clients and which client each
/// connection belongs to (one connection per client; one per client and primary in
/// cluster mode, as memtier opens them).
pub struct WindowPlan<W: Window> {
    pub source: Arc<W>,
    pub clients: Vec<W::Client>,
    /// Per entry of `Plan::conns`: its client's index in `clients`.
    pub conn_client: Vec<usize>,
    /// Requests per client (memtier's -n); None when time-bounded.
    pub client_quota: Option<u64>,
    /// Rate limit: requests a connection may send per tick of `Plan::interval_ns`
    /// (memtier's `request_per_interval`); None: as fast as the window allows.
    pub per_tick: Option<u32>,
    /// After each client's connections but the last, the thread pauses a draw in
    /// [min, max] µs (max 0: never; memtier's --thread-conn-start-*-jitter-micros).
    pub connect_jitter_us: (u32, u32),
    /// A client's window never reaches past its next multiple of N answered requests,
    /// and its connection is replaced when it gets there (memtier's --reconnect-interval).
    pub reconnect_every: Option<u64>,
}

impl<B: Batches, W: Window> Plan<B, W> {
    /// The shard of endpoint `node` (the endpoint itself without a read route).
    #[inline]
    pub fn shard(&self, node: usize) -> usize {
        self.read_route.as_ref().map_or(node, |r| r.shard_of[node])
    }

    /// How connections to endpoint `node` start (READONLY first on cluster replicas).
    pub fn connect_for(&self, node: usize) -> &ConnectSpec {
        match &self.read_route {
            Some(r) if r.replica[node] => &r.readonly,
            _ => &self.connect,
        }
    }

    /// Slot lists the slot-ownership table is built from: per shard with a read route.
    pub fn owner_slots(&self) -> &[Vec<u16>] {
        self.read_route.as_ref().map_or(&self.slots, |r| &r.shard_slots)
    }

    /// The window-mode part of the plan (None in batch mode).
    #[inline]
    pub fn window(&self) -> Option<&WindowPlan<W>> {
        match &self.requests {
            Requests::Window(w) => Some(w),
            Requests::Batches { .. } => None,
        }
    }

    /// The batch source (None in window mode).
    #[inline]
    pub fn batches(&self) -> Option<&B> {
        match &self.requests {
            Requests::Batches { source, .. } => Some(source),
            Requests::Window(_) => None,
        }
    }
}
