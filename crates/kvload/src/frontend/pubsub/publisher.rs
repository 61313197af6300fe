//! pubsub::publisher: publisher connections on blocking threads — a closed loop (`-P`
//! messages in flight) or an open loop (a writer on the `--rps` schedule and a reader of the
//! replies); each counts its acknowledged publishes per channel.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use crate::base::clock;
use crate::base::resp::{self, encode_into, Kind};
use crate::engine::stats::{self, ThreadStats};

use super::conn::{connect, REPLY_TIMEOUT_S};
use super::options::{Bound, PubsubOptions};
use super::payload::{self, Stamp};

/// A late open-loop send: more than 1 ms after its intended time.
const LATE_NS: u64 = 1_000_000;


/// What one publisher did: acknowledged publishes per channel index, error replies, and
/// its thread's statistics (CPU, late sends, the end of its publishing).
pub(super) struct Published {
    pub per_channel: Vec<u64>,
    pub st: ThreadStats,
}

/// Whether publisher message `seq` due at `at` is still within the bound.
fn within(o: &PubsubOptions, t0: u64, seq: u64, at: u64) -> bool {
    match o.bound {
        Bound::Seconds(s) => at < t0 + (s * 1e9) as u64,
        Bound::Messages(n) => seq < n,
    }
}

/// Appends publisher `p`'s message `seq` to `out`; returns its channel index.
fn publish_cmd(o: &PubsubOptions, p: usize, seq: u64, intended: u64, body: &mut Vec<u8>, out: &mut Vec<u8>) -> usize {
    let c = payload::channel_for(p, seq, o.channels);
    payload::encode(&Stamp { publisher: p as u32, seq, intended_ns: intended, sent_ns: clock::now() }, o.data_size, body);
    let name = o.channel(c);
    encode_into(&[o.mode.publish().as_bytes(), name.as_bytes(), body], out);
    c
}

/// Reads replies to the publishes whose channels `pending` holds (front first) until
/// `want` more arrived.
struct Acks {
    buf: Vec<u8>,
    len: usize,
}

impl Acks {
    fn read(&mut self, s: &mut TcpStream, want: usize, mut each: impl FnMut(Kind, &[u8])) -> Result<(), String> {
        let mut got = 0;
        while got < want {
            let mut pos = 0;
            while got < want {
                match resp::skip(&self.buf[pos..self.len]).map_err(|e| format!("protocol error: {}", e.0))? {
                    Some((used, kind)) => {
                        each(kind, &self.buf[pos..pos + used]);
                        pos += used;
                        got += 1;
                    }
                    None => break,
                }
            }
            self.buf.copy_within(pos..self.len, 0);
            self.len -= pos;
            if got == want {
                break;
            }
            if self.len == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            let n = s.read(&mut self.buf[self.len..]).map_err(|e| format!("reading publish replies: {e}"))?;
            if n == 0 {
                return Err("a publisher's connection was closed by the server".into());
            }
            self.len += n;
        }
        Ok(())
    }
}

fn ack(per_channel: &mut [u64], st: &mut ThreadStats, c: usize, kind: Kind, reply: &[u8]) {
    match kind {
        Kind::Error { class, start, end } => {
            st.note_error(class, &reply[start..end]);
            st.record_error(clock::now(), class);
        }
        _ => per_channel[c] += 1,
    }
}

/// Closed loop: `pipeline` publishes in flight, the next batch after the last's replies.
pub(super) fn closed_publisher(o: &PubsubOptions, p: usize, t0: u64) -> Result<Published, String> {
    let mut s = connect(o)?;
    let mut st = ThreadStats::new(3, false);
    st.start_measuring(t0);
    let mut per_channel = vec![0u64; o.channels];
    let (mut body, mut out, mut batch) = (Vec::new(), Vec::new(), Vec::new());
    let mut acks = Acks { buf: vec![0u8; 64 * 1024], len: 0 };
    let mut seq = 0u64;
    loop {
        out.clear();
        batch.clear();
        while batch.len() < o.pipeline && within(o, t0, seq, clock::now()) {
            batch.push(publish_cmd(o, p, seq, clock::now(), &mut body, &mut out));
            seq += 1;
        }
        if batch.is_empty() {
            break;
        }
        s.write_all(&out).map_err(|e| format!("publishing: {e}"))?;
        let mut i = 0;
        acks.read(&mut s, batch.len(), |kind, reply| {
            ack(&mut per_channel, &mut st, batch[i], kind, reply);
            i += 1;
        })?;
    }
    st.finish(clock::now());
    Ok(Published { per_channel, st })
}

/// Open loop: a writer sends message k at t0 + k / rate whatever the replies; this thread
/// reads the replies in order (the writer passes each message's channel).
pub(super) fn open_publisher(o: &PubsubOptions, p: usize, t0: u64, rate: f64) -> Result<Published, String> {
    let mut s = connect(o)?;
    s.set_read_timeout(Some(Duration::from_millis(100))).map_err(|e| e.to_string())?;
    let mut ws = s.try_clone().map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel::<usize>();
    let wo = o.clone();
    let writer = std::thread::spawn(move || -> Result<(f64, f64, u64), String> {
        let c0 = stats::thread_cpu();
        let (mut body, mut out, mut late) = (Vec::new(), Vec::new(), 0u64);
        let mut seq = 0u64;
        loop {
            let intended = t0 + (seq as f64 * 1e9 / rate) as u64;
            if !within(&wo, t0, seq, intended) {
                break;
            }
            let now = clock::now();
            if now < intended {
                std::thread::sleep(Duration::from_nanos(intended - now));
            } else if now > intended + LATE_NS {
                late += 1;
            }
            out.clear();
            let c = publish_cmd(&wo, p, seq, intended, &mut body, &mut out);
            if tx.send(c).is_err() {
                break;
            }
            ws.write_all(&out).map_err(|e| format!("publishing: {e}"))?;
            seq += 1;
        }
        let c1 = stats::thread_cpu();
        Ok((c1.0 - c0.0, c1.1 - c0.1, late))
    });
    let mut st = ThreadStats::new(3, true);
    st.start_measuring(t0);
    let mut per_channel = vec![0u64; o.channels];
    let read = read_open_acks(&mut s, &rx, &mut per_channel, &mut st);
    if read.is_err() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    let (u, sy, late) = writer.join().map_err(|_| "a publisher thread panicked".to_string())??;
    read?;
    st.finish(clock::now());
    st.cpu.0 += u;
    st.cpu.1 += sy;
    // its sender never waits for a reply: every late send is its own
    (st.late, st.late_own) = (late, late);
    Ok(Published { per_channel, st })
}

/// Reads replies until the writer has finished and every message it sent was answered.
fn read_open_acks(s: &mut TcpStream, rx: &mpsc::Receiver<usize>, per_channel: &mut [u64], st: &mut ThreadStats) -> Result<(), String> {
    let mut pending: VecDeque<usize> = VecDeque::new();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut len, mut writer_done, mut idle_since) = (0usize, false, clock::now());
    loop {
        loop {
            match rx.try_recv() {
                Ok(c) => pending.push_back(c),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    writer_done = true;
                    break;
                }
            }
        }
        if writer_done && pending.is_empty() {
            return Ok(());
        }
        match s.read(&mut buf[len..]) {
            Ok(0) => return Err("a publisher's connection was closed by the server".into()),
            Ok(n) => {
                len += n;
                idle_since = clock::now();
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                if !pending.is_empty() && clock::now() - idle_since > REPLY_TIMEOUT_S * 1_000_000_000 {
                    return Err(format!("no reply to a publish in {REPLY_TIMEOUT_S} s"));
                }
                continue;
            }
            Err(e) => return Err(format!("reading publish replies: {e}")),
        }
        let mut pos = 0;
        while let Some((used, kind)) = resp::skip(&buf[pos..len]).map_err(|e| format!("protocol error: {}", e.0))? {
            while pending.is_empty() {
                pending.push_back(rx.recv().map_err(|_| "a reply to no publish".to_string())?);
            }
            let c = pending.pop_front().unwrap_or(0);
            ack(per_channel, st, c, kind, &buf[pos..pos + used]);
            pos += used;
        }
        buf.copy_within(pos..len, 0);
        len -= pos;
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
    }
}
