//! epoll_loop: the epoll (mio) event loop of a Worker — readiness events, non-blocking
//! reads and writes, a timerfd for the open loop's intended send times. Request logic is
//! the Worker's, shared with the io_uring loop (`uring_loop`).

use std::io;
use std::time::Duration;

use mio::{Events, Interest, Token};

use crate::base::clock;
use crate::engine::source::{Batches, Window};
use crate::engine::stats::ThreadStats;
use crate::engine::worker::{Worker, SPIN_NS, TIMER};

impl<B: Batches, W: Window> Worker<'_, B, W> {
    pub(super) fn run_epoll(mut self) -> Result<ThreadStats, String> {
        self.begin()?;
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
                if !self.before_sleep(&mut events, due)? {
                    continue;
                }
            }
            let timeout = self.timeout(now);
            if self.wait(&mut events, timeout)? {
                self.on_events(&events)?;
            }
        }
    }

    /// Open loop, before the loop may sleep until `due` (the next intended send; u64::MAX:
    /// none): events already ready are handled first, without blocking; a send due within
    /// `SPIN_NS` is waited for by polling again; only then is the timer armed at `due`. So
    /// the timer is armed once per sleep, not once per send (each `timerfd_settime` costs
    /// microseconds on a VM, more than a send). Returns true when the loop is to sleep.
    fn before_sleep(&mut self, events: &mut Events, due: u64) -> Result<bool, String> {
        if due == u64::MAX || self.timer.is_none() {
            return Ok(true);
        }
        if self.wait(events, Some(Duration::ZERO))? && !events.is_empty() {
            self.on_events(events)?;
            return Ok(false);
        }
        if due <= clock::now() + SPIN_NS {
            return Ok(false);
        }
        if let Some(t) = self.timer.as_mut() {
            t.arm_at(due);
        }
        Ok(true)
    }

    /// One epoll wait; false when a signal interrupted it.
    fn wait(&mut self, events: &mut Events, timeout: Option<Duration>) -> Result<bool, String> {
        match self.poll.poll(events, timeout) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(format!("poll: {e}")),
        }
    }

    fn on_events(&mut self, events: &Events) -> Result<(), String> {
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
        Ok(())
    }

    /// Writes connection i's unsent bytes as far as the socket takes them; a blocked write
    /// waits for WRITABLE.
    pub(super) fn write_out(&mut self, i: usize) -> Result<(), String> {
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

    /// Reads connection i until it would block, handling the replies after every read.
    fn on_readable(&mut self, i: usize) -> Result<(), String> {
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
            self.on_bytes(i, clock::now())?;
            if self.conns[i].rc.is_down() {
                return Ok(());
            }
            if n < space && !tls {
                return Ok(());
            }
        }
    }
}
