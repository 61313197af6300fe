//! uring: io_uring plumbing for the event loop in `engine/uring_loop.rs`: ring setup and
//! the kernel probe, a provided-buffer ring for multishot receives, registered files
//! and write buffers, and the user_data encoding. Knows nothing about requests.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::IoUring;

/// Provided-buffer group of the receive buffers.
pub const BGID: u16 = 0;
/// Size of one receive buffer; a larger reply arrives in several.
pub const RECV_BUF: usize = 16 * 1024;

/// What a completion belongs to (top byte of user_data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Send,
    Recv,
    Cancel,
}

/// user_data: op (8 bits) | connection generation (16 bits) | connection index (32 bits).
#[inline]
pub fn user_data(op: Op, gen: u16, conn: usize) -> u64 {
    let code = match op {
        Op::Send => 1u64,
        Op::Recv => 2,
        Op::Cancel => 3,
    };
    (code << 56) | ((gen as u64) << 32) | (conn as u64 & 0xffff_ffff)
}

#[inline]
pub fn decode(ud: u64) -> (Op, u16, usize) {
    let op = match ud >> 56 {
        1 => Op::Send,
        2 => Op::Recv,
        _ => Op::Cancel,
    };
    (op, (ud >> 32) as u16, (ud & 0xffff_ffff) as usize)
}

/// A ring for one thread: single issuer, task work deferred to our own
/// io_uring_enter (no interrupts of the loop), falling back to plain flags on
/// kernels without them.
pub fn new_ring(entries: u32) -> io::Result<IoUring> {
    let fancy = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_submit_all()
        .setup_cqsize(entries * 4)
        .build(entries);
    match fancy {
        Ok(r) => Ok(r),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::builder().setup_cqsize(entries * 4).build(entries),
        Err(e) => Err(e),
    }
}

/// Whether this process may use io_uring with what the loop needs: a ring, a
/// provided-buffer ring and registered files.
pub fn probe() -> Result<(), String> {
    let (major, minor) = kernel_version();
    if (major, minor) < (6, 0) {
        return Err(format!("kernel {major}.{minor} has no multishot receive (6.0+)"));
    }
    let ring = new_ring(8).map_err(|e| format!("io_uring_setup: {e}"))?;
    let bufs = BufRing::new(&ring, 2, 64).map_err(|e| format!("provided buffers: {e}"))?;
    ring.submitter().register_files_sparse(1).map_err(|e| format!("registered files: {e}"))?;
    drop(ring);
    drop(bufs);
    Ok(())
}

/// (major, minor) of the running kernel; (0, 0) if unknown.
fn kernel_version() -> (u32, u32) {
    // SAFETY: uname fills the zeroed struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return (0, 0);
    }
    let rel: String = u.release.iter().take_while(|&&c| c != 0).map(|&c| c as u8 as char).collect();
    let mut it = rel.split(|c: char| !c.is_ascii_digit()).filter_map(|x| x.parse().ok());
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// The provided-buffer ring: `entries` receive buffers of `size` bytes the kernel
/// picks from for multishot receives; a buffer goes back with `recycle` + `publish`.
pub struct BufRing {
    /// Page-aligned ring of entries (mmap), registered as group BGID.
    ring: *mut BufRingEntry,
    ring_len: usize,
    mask: u16,
    tail: u16,
    size: usize,
    mem: Vec<u8>,
}

impl BufRing {
    pub fn new(uring: &IoUring, entries: u16, size: usize) -> io::Result<BufRing> {
        let ring_len = entries as usize * std::mem::size_of::<BufRingEntry>();
        // SAFETY: anonymous private mapping; checked for MAP_FAILED; unmapped in Drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut b = BufRing { ring: ptr.cast(), ring_len, mask: entries - 1, tail: 0, size, mem: vec![0u8; entries as usize * size] };
        // SAFETY: the ring memory lives until Drop, after the IoUring that uses it
        // (the owner drops the ring first and cancels every receive before that).
        unsafe { uring.submitter().register_buf_ring_with_flags(b.ring as u64, entries, BGID, 0)? };
        for bid in 0..entries {
            b.recycle(bid);
        }
        b.publish();
        Ok(b)
    }

    /// Bytes `..len` of buffer `bid` (as filled by a receive).
    #[inline]
    pub fn data(&self, bid: u16, len: usize) -> &[u8] {
        let start = bid as usize * self.size;
        &self.mem[start..start + len.min(self.size)]
    }

    /// Hands buffer `bid` back (visible to the kernel after `publish`).
    #[inline]
    pub fn recycle(&mut self, bid: u16) {
        let addr = self.mem.as_ptr() as u64 + (bid as usize * self.size) as u64;
        // SAFETY: tail & mask < entries, inside the mapping.
        let e = unsafe { &mut *self.ring.add((self.tail & self.mask) as usize) };
        e.set_addr(addr);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes recycled buffers visible to the kernel.
    #[inline]
    pub fn publish(&self) {
        // SAFETY: the tail field overlays entry 0's reserved field; the kernel reads it
        // with acquire semantics, so entries written before are visible.
        unsafe {
            let tail = BufRingEntry::tail(self.ring) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: our own mapping of ring_len bytes.
        unsafe { libc::munmap(self.ring.cast(), self.ring_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips() {
        let ud = user_data(Op::Recv, 65535, 4_000_000);
        assert_eq!(decode(ud), (Op::Recv, 65535, 4_000_000));
        assert_eq!(decode(user_data(Op::Send, 0, 0)), (Op::Send, 0, 0));
        assert_eq!(decode(user_data(Op::Cancel, 1, 7)).0, Op::Cancel);
    }
}
