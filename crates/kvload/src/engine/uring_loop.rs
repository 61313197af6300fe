//! The io_uring event loop of a Worker (`--io uring`): one ring per thread. Each
//! iteration submits the sends of every connection that became ready (and re-arms
//! ended receives) in one io_uring_enter that also waits for completions. Replies
//! arrive through one multishot receive per connection into a provided-buffer ring;
//! connections are registered files; a batch goes in one SEND (WRITE_FIXED from a
//! registered buffer cost 7% more CPU per request at P=16, docs/PERFORMANCE.md). Request
//! logic (batches, windows, replies, MOVED/ASK, stats) is the Worker's, shared with the
//! epoll loop; only how bytes move differs.

use std::time::Duration;

use io_uring::types::{CancelBuilder, Fixed, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode};

use crate::base::clock;
use crate::base::uring::{self, Op};
use crate::engine::conn;
use crate::engine::ring::{err, UringState};
use crate::engine::source::{Batches, Window};
use crate::engine::stats::ThreadStats;
use crate::engine::worker::{self, Worker};

impl<B: Batches, W: Window> Worker<'_, B, W> {
    pub(super) fn run_uring(mut self) -> Result<ThreadStats, String> {
        self.begin()?;
        loop {
            let now = clock::now();
            self.maybe_start_measuring(now);
            if self.finished(now) {
                self.drain_uring();
                return Ok(self.finish(now));
            }
            let mut wake = self.timeout(now).map(|d| now + d.as_nanos() as u64);
            if self.plan.interval_ns.is_some() {
                let due = self.dispatch_open(now)?;
                if due != u64::MAX {
                    wake = Some(wake.map_or(due, |w| w.min(due)));
                }
            }
            self.submit_io()?;
            self.enter(wake.map(|w| Duration::from_nanos(w.saturating_sub(clock::now()))))?;
            self.reap()?;
        }
    }

    fn ur(&mut self) -> &mut UringState {
        // run_uring is only entered with the state set up (Worker::new).
        self.ur.as_mut().unwrap_or_else(|| worker::fatal("internal error: io_uring state missing".into()))
    }

    /// Submits and waits for at least one completion (or `timeout`).
    fn enter(&mut self, timeout: Option<Duration>) -> Result<(), String> {
        let u = self.ur();
        let r = match timeout {
            None => u.ring.submit_and_wait(1),
            Some(t) => {
                let ts = Timespec::new().sec(t.as_secs()).nsec(t.subsec_nanos());
                u.ring.submitter().submit_with_args(1, &SubmitArgs::new().timespec(&ts))
            }
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)) => Ok(()),
            Err(e) => Err(err("enter", e)),
        }
    }

    /// True while connection i's bytes are being sent (do not rewrite them).
    pub(super) fn send_in_flight(&self, i: usize) -> bool {
        self.ur.as_ref().is_some_and(|u| u.per[i].sending)
    }

    /// The next batch or refill of connection i waits for its send to complete.
    pub(super) fn defer_until_sent(&mut self, i: usize) {
        self.ur().per[i].deferred = true;
    }

    /// Queues connection i's unsent bytes for the next submission.
    pub(super) fn queue_send(&mut self, i: usize) {
        let u = self.ur();
        let p = &mut u.per[i];
        if !p.queued && !p.sending {
            p.queued = true;
            u.pending.push(i);
        }
    }

    /// SQEs for every queued send and every receive to re-arm.
    fn submit_io(&mut self) -> Result<(), String> {
        let Worker { ur, conns, .. } = &mut *self;
        let Some(u) = ur.as_mut() else { return Ok(()) };
        for k in 0..u.pending.len() {
            let i = u.pending[k];
            u.per[i].queued = false;
            let c = &conns[i];
            if c.written >= c.wlen {
                continue;
            }
            let (ptr, len) = (c.wbuf.as_ptr() as usize + c.written, c.wlen - c.written);
            let ud = uring::user_data(Op::Send, u.per[i].gen, i);
            let sqe = opcode::Send::new(Fixed(i as u32), ptr as *const u8, len as u32).build();
            u.push(&sqe.user_data(ud))?;
            u.per[i].sending = true;
            u.outstanding += 1;
        }
        u.pending.clear();
        for k in 0..u.rearm.len() {
            let i = u.rearm[k];
            if u.per[i].armed {
                continue;
            }
            let sqe = opcode::RecvMulti::new(Fixed(i as u32), uring::BGID).build();
            u.push(&sqe.user_data(uring::user_data(Op::Recv, u.per[i].gen, i)))?;
            u.per[i].armed = true;
            u.outstanding += 1;
        }
        u.rearm.clear();
        Ok(())
    }

    /// Handles every completion in the queue.
    fn reap(&mut self) -> Result<(), String> {
        let u = self.ur();
        let mut cqes = std::mem::take(&mut u.cqes);
        cqes.clear();
        cqes.extend(u.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
        let now = clock::now();
        let mut out = Ok(());
        for &(ud, res, flags) in &cqes {
            let (op, gen, i) = uring::decode(ud);
            out = match op {
                Op::Send => self.on_sent(i, gen, res, now),
                Op::Recv => self.on_recv(i, gen, res, flags, now),
                Op::Cancel => Ok(()),
            };
            if out.is_err() {
                break;
            }
        }
        let u = self.ur();
        u.bufs.publish();
        u.cqes = cqes;
        out
    }

    fn on_sent(&mut self, i: usize, gen: u16, res: i32, now: u64) -> Result<(), String> {
        let u = self.ur();
        u.outstanding -= 1;
        if u.per[i].gen != gen || u.draining {
            return Ok(());
        }
        u.per[i].sending = false;
        if res == -libc::EAGAIN || res == -libc::EINTR {
            self.queue_send(i);
            return Ok(());
        }
        if res <= 0 {
            let why = if res == 0 { "write returned 0".into() } else { std::io::Error::from_raw_os_error(-res).to_string() };
            return Err(self.lost(i, why));
        }
        let c = &mut self.conns[i];
        c.written += res as usize;
        if c.written < c.wlen {
            self.queue_send(i);
        } else if std::mem::take(&mut self.ur().per[i].deferred) {
            self.next_closed(i, now)?;
        }
        Ok(())
    }

    fn on_recv(&mut self, i: usize, gen: u16, res: i32, flags: u32, now: u64) -> Result<(), String> {
        let u = self.ur();
        let bid = cqueue::buffer_select(flags);
        if !cqueue::more(flags) {
            u.outstanding -= 1;
            if u.per[i].gen == gen {
                u.per[i].armed = false;
                u.rearm.push(i);
            }
        }
        if res <= 0 || u.per[i].gen != gen || u.draining {
            if let Some(b) = bid {
                u.bufs.recycle(b);
            }
            if u.per[i].gen != gen || u.draining || res == -libc::ENOBUFS || res == -libc::EINTR {
                return Ok(());
            }
            let why = if res == 0 { "server closed the connection".into() } else { std::io::Error::from_raw_os_error(-res).to_string() };
            return Err(self.lost(i, why));
        }
        let Some(b) = bid else { return Err(self.lost(i, "receive without a buffer".into())) };
        let Worker { ur, conns, .. } = &mut *self;
        let Some(u) = ur.as_mut() else { return Ok(()) };
        conn::append(&mut conns[i], u.bufs.data(b, res as usize));
        u.bufs.recycle(b);
        self.on_bytes(i, now)
    }

    /// -k 0: the connection's socket was replaced by `fd`: point its registered
    /// file at it; completions of the old socket are ignored from now on.
    pub(super) fn uring_replace(&mut self, i: usize, old_fd: i32, fd: i32) -> Result<(), String> {
        // SAFETY: shutting down a socket we still own wakes its receive.
        unsafe { libc::shutdown(old_fd, libc::SHUT_RDWR) };
        let u = self.ur();
        u.ring.submitter().register_files_update(i as u32, &[fd]).map_err(|e| err("update files", e))?;
        let p = &mut u.per[i];
        p.gen = p.gen.wrapping_add(1);
        p.sending = false;
        p.queued = false;
        p.deferred = false;
        p.armed = false;
        u.rearm.push(i);
        Ok(())
    }

    /// Cancels every receive and waits (at most 2 s) until no SQE is in flight, so no
    /// buffer is touched by the kernel after the worker is gone.
    fn drain_uring(&mut self) {
        let deadline = clock::now() + 2_000_000_000;
        let u = self.ur();
        u.draining = true;
        u.pending.clear();
        u.rearm.clear();
        let cancel = opcode::AsyncCancel2::new(CancelBuilder::any()).build();
        if u.push(&cancel.user_data(uring::user_data(Op::Cancel, 0, 0))).is_err() {
            return;
        }
        while self.ur().outstanding > 0 && clock::now() < deadline {
            if self.enter(Some(Duration::from_millis(100))).is_err() || self.reap().is_err() {
                return;
            }
        }
    }
}
