//! clock: monotonic nanoseconds and a timerfd for precise open-loop wakeups.

use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn now() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A non-blocking timerfd on CLOCK_MONOTONIC, armed at absolute times.
pub struct Timer {
    pub fd: RawFd,
    armed_at: u64,
}

impl Timer {
    pub fn new() -> Result<Timer, String> {
        // SAFETY: plain syscall; the fd is owned by Timer and closed on drop.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!("timerfd_create: {}", std::io::Error::last_os_error()));
        }
        Ok(Timer { fd, armed_at: 0 })
    }

    /// Arms the timer for absolute time `at` (ns); a no-op if already armed there.
    pub fn arm_at(&mut self, at: u64) {
        if at == self.armed_at {
            return;
        }
        self.armed_at = at;
        let at = at.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at / 1_000_000_000) as _, tv_nsec: (at % 1_000_000_000) as _ },
        };
        // SAFETY: fd is a valid timerfd; spec lives across the call.
        unsafe { libc::timerfd_settime(self.fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// Consumes the expiration count after the fd became readable.
    pub fn drain(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into buf.
        unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut libc::c_void, 8) };
        self.armed_at = 0;
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.fd) };
    }
}
