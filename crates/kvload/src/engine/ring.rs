//! ring: a thread's io_uring state — the ring, the provided buffers of the receives, the
//! registered files, and each connection's send/receive state — for the io_uring loop
//! (`uring_loop`).

use io_uring::{squeue, IoUring};

use crate::base::uring::{self, BufRing};
use crate::engine::conn::Conn;

/// Per-connection io_uring state.
#[derive(Default, Clone, Copy)]
pub(super) struct UConn {
    /// Bumped on reconnect (-k 0); completions of older sockets are ignored.
    pub(super) gen: u16,
    /// A send SQE is in flight (its bytes must not change).
    pub(super) sending: bool,
    /// In `pending` (bytes to send, not submitted yet).
    pub(super) queued: bool,
    /// The next batch / window refill waits for the in-flight send to complete.
    pub(super) deferred: bool,
    /// A multishot receive is armed.
    pub(super) armed: bool,
}

pub(super) struct UringState {
    pub(super) ring: IoUring,
    pub(super) bufs: BufRing,
    pub(super) per: Vec<UConn>,
    pub(super) pending: Vec<usize>,
    pub(super) rearm: Vec<usize>,
    /// SQEs whose last completion has not been seen (sends + armed receives).
    pub(super) outstanding: usize,
    pub(super) cqes: Vec<(u64, i32, u32)>,
    /// Finishing: completions are only accounted, not acted on.
    pub(super) draining: bool,
}

pub(super) fn err(what: &str, e: std::io::Error) -> String {
    format!("io_uring {what}: {e}")
}

impl UringState {
    /// A ring for a thread's connections: their sockets.
    pub(super) fn for_conns(conns: &[Conn]) -> Result<UringState, String> {
        let fds: Vec<i32> = conns.iter().map(|c| c.stream.raw_fd()).collect();
        UringState::new(&fds)
    }

    /// A ring for `fds` (one per connection, in order).
    fn new(fds: &[i32]) -> Result<UringState, String> {
        let n = fds.len();
        let entries = (2 * n + 8).next_power_of_two().clamp(64, 4096) as u32;
        let ring = uring::new_ring(entries).map_err(|e| err("setup", e))?;
        let nbufs = (4 * n).next_power_of_two().clamp(64, 4096) as u16;
        let bufs = BufRing::new(&ring, nbufs, uring::RECV_BUF).map_err(|e| err("provided buffers", e))?;
        ring.submitter().register_files(fds).map_err(|e| err("register files", e))?;
        Ok(UringState {
            ring,
            bufs,
            per: vec![UConn::default(); n],
            pending: Vec::with_capacity(n),
            rearm: (0..n).collect(),
            outstanding: 0,
            cqes: Vec::with_capacity(entries as usize * 4),
            draining: false,
        })
    }

    pub(super) fn push(&mut self, e: &squeue::Entry) -> Result<(), String> {
        // SAFETY: every buffer an SQE points to outlives its completion (write buffers
        // and the buffer ring live as long as the ring; see Worker::drain_uring).
        while unsafe { self.ring.submission().push(e) }.is_err() {
            self.ring.submit().map_err(|e| err("submit", e))?;
        }
        Ok(())
    }
}
