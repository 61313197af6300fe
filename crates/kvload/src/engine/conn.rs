//! conn: a thread's connections — each one's buffers and state (its window in window
//! mode, its clients' state), and opening them: blocking setup, then registered with epoll
//! or handed to io_uring.

use std::collections::VecDeque;

use mio::{Interest, Poll, Token};

use crate::base::event_loop::IoKind;
use crate::base::rng::Rng;
use crate::base::transport::{self, Stream};
use crate::engine::plan::{Plan, Requests};
use crate::engine::reconnect;
use crate::engine::route::Route;
use crate::engine::source::{Batches, Window};

/// Initial size of a connection's read buffer (it grows for a larger reply).
const RBUF: usize = 64 * 1024;

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
    /// When its last batch's replies were read (0: never): an open-loop send due before
    /// then waited for the server, not for kvload.
    pub(super) freed: u64,
    /// Registered for WRITABLE too (only while a write is blocked).
    pub(super) want_write: bool,
    /// Window mode: its window of requests in flight.
    pub(super) window: Option<ConnWindow>,
    /// --reconnect-on-error: down / backoff state.
    pub(super) rc: reconnect::ConnState,
}

/// Per-client state.
pub(super) struct ClientState<W: Window> {
    pub(super) client: W::Client,
    /// Cluster mode: requests drawn for each primary's connection, not sent yet.
    pub(super) queues: Vec<VecDeque<W::Pending>>,
    /// Requests it may still draw (its -n; u64::MAX when time-bounded).
    pub(super) budget: u64,
    pub(super) answered: u64,
    /// memtier's end time of this client: the first reply read at or after the
    /// --test-time deadline, or the reply that completed its -n requests. Replies
    /// to requests still in flight then are counted, but do not move it.
    pub(super) end: Option<u64>,
}

/// Per-connection window state.
pub(super) struct ConnWindow {
    /// Index of its client in `Worker::clients`.
    pub(super) client: usize,
    /// In-flight requests, oldest first: (command index, start of its bytes in
    /// wbuf, send time). Capacity = pipeline, so pushing never allocates.
    pub(super) window: VecDeque<(u16, u32, u64)>,
    /// Rate limit: requests it may still send in this tick (u32::MAX: no limit).
    pub(super) left: u32,
}

/// A thread pauses between creating two clients (memtier's --thread-conn-start-*-jitter-
/// micros), here before the first connection of every client but the thread's first.
pub(super) fn connect_pause<B: Batches, W: Window>(plan: &Plan<B, W>, i: usize, rng: &mut Rng) {
    let Some(m) = plan.window() else { return };
    let (lo, hi) = m.connect_jitter_us;
    let first_of_client = i > 0 && m.conn_client.get(i) != m.conn_client.get(i - 1);
    if hi > 0 && first_of_client {
        let us = u64::from(lo) + rng.below(u64::from(hi - lo) + 1);
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// This thread's clients, each with its budget (and a queue per node in cluster mode).
pub(super) fn client_states<B: Batches, W: Window>(plan: &Plan<B, W>) -> Vec<ClientState<W>> {
    let Some(m) = plan.window() else { return Vec::new() };
    let queues = if plan.route == Route::Sampled { plan.endpoints.len() } else { 0 };
    let budget = m.client_quota.unwrap_or(u64::MAX);
    m.clients.iter().map(|c| ClientState { client: c.clone(), queues: vec![VecDeque::new(); queues], budget, answered: 0, end: None }).collect()
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

/// A connection's write buffer and, in window mode, its window.
fn conn_buffers<B: Batches, W: Window>(plan: &Plan<B, W>, i: usize) -> Result<(Vec<u8>, Option<ConnWindow>), String> {
    match &plan.requests {
        Requests::Window(m) => {
            let client = *m.conn_client.get(i).ok_or("internal error: no memtier client for a connection")?;
            let window = VecDeque::with_capacity(plan.pipeline);
            let left = m.per_tick.unwrap_or(u32::MAX);
            Ok((Vec::with_capacity(plan.pipeline * m.source.request_len()), Some(ConnWindow { client, window, left })))
        }
        // Sized once for the longest batch: never grows.
        Requests::Batches { source, .. } => Ok((source.buffer(plan.pipeline), None)),
    }
}

/// Opens this thread's connections (registered with `poll` for epoll; blocking sockets
/// for io_uring, which waits for readiness itself).
pub(super) fn connect_all<B: Batches, W: Window>(plan: &Plan<B, W>, poll: &Poll) -> Result<Vec<Conn>, String> {
    let mut conns = Vec::with_capacity(plan.conns.len());
    let uring = plan.io == IoKind::Uring;
    let mut jitter = Rng::new(plan.conns.first().map_or(0, |c| c.1 as u64));
    for (i, &(node, _)) in plan.conns.iter().enumerate() {
        connect_pause(plan, i, &mut jitter);
        let mut stream = transport::connect(&plan.endpoints[node], plan.connect_for(node))?;
        if uring {
            stream.set_blocking()?;
        } else {
            register(poll, &mut stream, i)?;
        }
        let (wbuf, window) = conn_buffers(plan, i)?;
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
            freed: 0,
            want_write: false,
            window,
            rc: reconnect::ConnState::default(),
        });
    }
    Ok(conns)
}
