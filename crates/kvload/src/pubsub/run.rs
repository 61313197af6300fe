//! pubsub::run: the connections. Subscribers first (each confirmed subscribed before any
//! message is published), then publishers on their own threads (blocking sockets; an open
//! loop has a writer and a reader thread per publisher), then a bounded drain until every
//! expected message arrived, then the accounting and the report.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};

use super::payload::{self, Stamp, Tally};
use super::{Bound, Mode, PubsubOptions};
use crate::clock;
use crate::io::{IoKind, IoUsed};
use crate::report::{self, TestResult};
use crate::resp::{self, Kind};
use crate::stats::{self, ThreadStats};

/// Seconds a blocking socket waits for a reply before the run fails.
const REPLY_TIMEOUT_S: u64 = 30;
/// A late open-loop send: more than 1 ms after its intended time.
const LATE_NS: u64 = 1_000_000;

/// What the threads share: subscription readiness, the start and end of publishing, the
/// number of new messages delivered (for the drain) and the stop signal.
#[derive(Default)]
struct Shared {
    ready: AtomicUsize,
    t0: AtomicU64,
    delivered: AtomicU64,
    done: AtomicBool,
    failed: Mutex<Option<String>>,
}

impl Shared {
    fn fail(&self, e: String) {
        if let Ok(mut f) = self.failed.lock() {
            f.get_or_insert(e);
        }
        self.done.store(true, Ordering::SeqCst);
    }

    fn failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }
}

fn encode_cmd(args: &[&[u8]], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

fn connect(o: &PubsubOptions) -> Result<TcpStream, String> {
    let s = TcpStream::connect((o.host.as_str(), o.port)).map_err(|e| format!("Could not connect to server at {}:{}: {e}", o.host, o.port))?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(Duration::from_secs(REPLY_TIMEOUT_S))).map_err(|e| e.to_string())?;
    Ok(s)
}

/// One element of a RESP array: a bulk string's bytes or an integer's digits, and the
/// bytes it took.
fn element(b: &[u8]) -> Option<(&[u8], usize)> {
    let eol = b.windows(2).position(|w| w == b"\r\n")?;
    match b.first()? {
        b'$' => {
            let n: usize = std::str::from_utf8(&b[1..eol]).ok()?.parse().ok()?;
            let start = eol + 2;
            Some((b.get(start..start + n)?, start + n + 2))
        }
        b':' => Some((&b[1..eol], eol + 2)),
        _ => None,
    }
}

/// The kind (`message`, `subscribe`, …) and last element of a pub/sub frame (a RESP2
/// array or RESP3 push of bulk strings and integers); None for anything else.
pub fn frame_parts(frame: &[u8]) -> Option<(&[u8], &[u8])> {
    if !matches!(frame.first(), Some(b'*' | b'>')) {
        return None;
    }
    let eol = frame.windows(2).position(|w| w == b"\r\n")?;
    let n: usize = std::str::from_utf8(&frame[1..eol]).ok()?.parse().ok()?;
    let mut pos = eol + 2;
    let (kind, used) = element(&frame[pos..])?;
    pos += used;
    let mut last = kind;
    for _ in 1..n {
        let (e, used) = element(&frame[pos..])?;
        last = e;
        pos += used;
    }
    Some((kind, last))
}

// ---------- subscribers ----------

/// One subscriber connection.
struct Sub {
    stream: mio::net::TcpStream,
    buf: Vec<u8>,
    len: usize,
    channels: Vec<usize>,
    tally: Tally,
    /// The server closed the connection (a subscriber over client-output-buffer-limit
    /// pubsub is disconnected): what it did not receive counts as lost.
    closed: bool,
}

/// Connects, subscribes to `channels` and waits for every confirmation.
fn subscribe(o: &PubsubOptions, channels: &[usize]) -> Result<TcpStream, String> {
    let mut s = connect(o)?;
    let names: Vec<String> = channels.iter().map(|&c| subscription_name(o, c)).collect();
    let mut args: Vec<&[u8]> = vec![o.mode.name().as_bytes()];
    args.extend(names.iter().map(|n| n.as_bytes()));
    let mut out = Vec::new();
    encode_cmd(&args, &mut out);
    s.write_all(&out).map_err(|e| format!("subscribing: {e}"))?;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut len, mut confirmed) = (0, 0);
    while confirmed < names.len() {
        let got = s.read(&mut buf[len..]).map_err(|e| format!("subscribing: {e}"))?;
        if got == 0 {
            return Err("subscribing: the server closed the connection".into());
        }
        len += got;
        let mut pos = 0;
        while let Some((used, kind)) = resp::skip(&buf[pos..len]).map_err(|e| format!("protocol error: {}", e.0))? {
            if let Kind::Error { start, end, .. } = kind {
                return Err(format!("{}: the server answered {}", o.mode.name().to_uppercase(), String::from_utf8_lossy(&buf[pos + start..pos + end])));
            }
            confirmed += 1;
            pos += used;
        }
        buf.copy_within(pos..len, 0);
        len -= pos;
    }
    Ok(s)
}

/// The name subscribed to: the channel, or for PSUBSCRIBE a pattern matching exactly it.
fn subscription_name(o: &PubsubOptions, c: usize) -> String {
    let name = o.channel(c);
    if o.mode != Mode::Psubscribe {
        return name;
    }
    name.chars().flat_map(|ch| if "*?[]\\".contains(ch) { vec!['\\', ch] } else { vec![ch] }).collect()
}

/// Handles the complete frames in `sub`'s buffer; returns the new messages.
fn consume(sub: &mut Sub, st: &mut ThreadStats, now: u64) -> Result<u64, String> {
    let mut pos = 0;
    let mut new = 0;
    while let Some((used, kind)) = resp::skip(&sub.buf[pos..sub.len]).map_err(|e| format!("protocol error: {}", e.0))? {
        let frame = &sub.buf[pos..pos + used];
        pos += used;
        if let Kind::Error { class, start, end } = kind {
            st.note_error(class, &frame[start..end]);
            st.record_error(now, class);
            continue;
        }
        let Some((what, last)) = frame_parts(frame) else { continue };
        if !matches!(what, b"message" | b"pmessage" | b"smessage") {
            continue;
        }
        match payload::decode(last) {
            Some(s) if sub.tally.note(s.publisher, s.seq) => {
                st.record(now, now.saturating_sub(s.intended_ns), now.saturating_sub(s.sent_ns));
                new += 1;
            }
            Some(_) => {}
            None => sub.tally.foreign += 1,
        }
    }
    sub.buf.copy_within(pos..sub.len, 0);
    sub.len -= pos;
    Ok(new)
}

/// Reads what `sub` has until it would block.
fn read_sub(sub: &mut Sub, st: &mut ThreadStats) -> Result<u64, String> {
    let mut new = 0;
    loop {
        if sub.len == sub.buf.len() {
            let n = sub.buf.len() * 2;
            sub.buf.resize(n, 0);
        }
        match sub.stream.read(&mut sub.buf[sub.len..]) {
            Ok(0) => {
                sub.closed = true;
                return Ok(new);
            }
            Ok(got) => {
                sub.len += got;
                new += consume(sub, st, clock::now())?;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                sub.closed = true;
                return Ok(new);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(new),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading messages: {e}")),
        }
    }
}

/// A subscriber thread: subscribes its connections, then reads messages until `done`.
fn subscriber_thread(o: &PubsubOptions, ids: Vec<usize>, shared: &Shared) -> Result<(ThreadStats, Vec<Sub>), String> {
    let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
    let mut subs = Vec::new();
    for (t, &i) in ids.iter().enumerate() {
        let channels = payload::channels_of(i, o.per_subscriber, o.channels);
        let s = subscribe(o, &channels)?;
        s.set_nonblocking(true).map_err(|e| e.to_string())?;
        let mut stream = mio::net::TcpStream::from_std(s);
        poll.registry().register(&mut stream, Token(t), Interest::READABLE).map_err(|e| format!("poll: {e}"))?;
        subs.push(Sub { stream, buf: vec![0u8; 64 * 1024], len: 0, channels, tally: Tally::new(o.publishers), closed: false });
        shared.ready.fetch_add(1, Ordering::SeqCst);
    }
    let mut poll = poll;
    let mut st = ThreadStats::new(3, o.rps.is_some());
    let mut events = Events::with_capacity(1024);
    let mut started = false;
    while !shared.done.load(Ordering::SeqCst) {
        poll.poll(&mut events, Some(Duration::from_millis(20))).map_err(|e| format!("poll: {e}"))?;
        if !started && shared.t0.load(Ordering::SeqCst) != 0 {
            st.start_measuring(shared.t0.load(Ordering::SeqCst));
            started = true;
        }
        let mut new = 0;
        for ev in events.iter() {
            if let Some(sub) = subs.get_mut(ev.token().0).filter(|s| !s.closed) {
                new += read_sub(sub, &mut st)?;
                if sub.closed {
                    let _ = poll.registry().deregister(&mut sub.stream);
                }
            }
        }
        shared.delivered.fetch_add(new, Ordering::SeqCst);
    }
    st.finish(clock::now());
    Ok((st, subs))
}

// ---------- publishers ----------

/// What one publisher did: acknowledged publishes per channel index, error replies, and
/// its thread's statistics (CPU, late sends, the end of its publishing).
struct Published {
    per_channel: Vec<u64>,
    st: ThreadStats,
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
    encode_cmd(&[o.mode.publish().as_bytes(), name.as_bytes(), body], out);
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
fn closed_publisher(o: &PubsubOptions, p: usize, t0: u64) -> Result<Published, String> {
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
fn open_publisher(o: &PubsubOptions, p: usize, t0: u64, rate: f64) -> Result<Published, String> {
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
    st.late = late;
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

// ---------- the run ----------

/// The accounting over all subscribers after the drain.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize)]
pub struct Counts {
    pub published: u64,
    pub expected: u64,
    pub delivered: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub foreign: u64,
    pub subscribers_with_loss: u64,
    /// Subscribers whose connection the server closed during the run.
    pub disconnected: u64,
}

/// Sums each subscriber's (channels, tally) against the acknowledged publishes per channel.
fn count<'a>(subs: impl Iterator<Item = (&'a [usize], &'a Tally, bool)>, published: &[u64]) -> Counts {
    let mut c = Counts { published: published.iter().sum(), ..Counts::default() };
    for (channels, tally, closed) in subs {
        c.disconnected += u64::from(closed);
        let want = payload::expected(channels, published);
        let lost = tally.lost(want);
        c.expected += want;
        c.delivered += tally.unique;
        c.lost += lost;
        c.duplicated += tally.duplicated;
        c.foreign += tally.foreign;
        c.subscribers_with_loss += u64::from(lost > 0);
    }
    c
}

/// A subscriber thread's result: its statistics and its connections' tallies.
type SubscriberThread = std::thread::JoinHandle<Result<(ThreadStats, Vec<Sub>), String>>;

/// Starts the subscriber threads and waits until every subscription is confirmed.
fn start_subscribers(o: &PubsubOptions, shared: &Arc<Shared>) -> Result<Vec<SubscriberThread>, String> {
    let threads = o.threads.min(o.subscribers);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let ids: Vec<usize> = (t..o.subscribers).step_by(threads).collect();
            let (o, shared) = (o.clone(), Arc::clone(shared));
            std::thread::spawn(move || {
                let r = subscriber_thread(&o, ids, &shared);
                if let Err(e) = &r {
                    shared.fail(e.clone());
                }
                r
            })
        })
        .collect();
    let deadline = clock::now() + REPLY_TIMEOUT_S * 1_000_000_000;
    while shared.ready.load(Ordering::SeqCst) < o.subscribers {
        if let Some(e) = shared.failure() {
            return Err(e);
        }
        if clock::now() > deadline {
            return Err(format!("only {} of {} subscribers subscribed in {REPLY_TIMEOUT_S} s", shared.ready.load(Ordering::SeqCst), o.subscribers));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(handles)
}

fn run_publishers(o: &PubsubOptions, t0: u64) -> Result<Vec<Published>, String> {
    let handles: Vec<_> = (0..o.publishers)
        .map(|p| {
            let o = o.clone();
            std::thread::spawn(move || match o.rps {
                Some(r) => open_publisher(&o, p, t0, r / o.publishers as f64),
                None => closed_publisher(&o, p, t0),
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.join().map_err(|_| "a publisher thread panicked".to_string())??);
    }
    Ok(out)
}

/// Waits (at most --drain seconds) until the subscribers received `expected` messages;
/// returns the seconds waited.
fn drain(o: &PubsubOptions, shared: &Shared, expected: u64) -> f64 {
    let start = clock::now();
    let limit = start + (o.drain_s * 1e9) as u64;
    while shared.delivered.load(Ordering::SeqCst) < expected && clock::now() < limit && shared.failure().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
    (clock::now() - start) as f64 / 1e9
}

pub fn run(o: &PubsubOptions) -> Result<(), String> {
    let shared = Arc::new(Shared::default());
    let handles = match start_subscribers(o, &shared) {
        Ok(h) => h,
        Err(e) => {
            shared.done.store(true, Ordering::SeqCst);
            return Err(e);
        }
    };
    let t0 = clock::now() + 5_000_000;
    shared.t0.store(t0, Ordering::SeqCst);
    let published = run_publishers(o, t0);
    let per_channel: Vec<u64> = match &published {
        Ok(p) => (0..o.channels).map(|c| p.iter().map(|x| x.per_channel[c]).sum()).collect(),
        Err(_) => vec![0; o.channels],
    };
    let expected: u64 = (0..o.subscribers).map(|i| payload::expected(&payload::channels_of(i, o.per_subscriber, o.channels), &per_channel)).sum();
    let drained_s = if published.is_ok() { drain(o, &shared, expected) } else { 0.0 };
    shared.done.store(true, Ordering::SeqCst);
    let mut parts = Vec::new();
    let mut subs = Vec::new();
    for h in handles {
        let (st, s) = h.join().map_err(|_| "a subscriber thread panicked".to_string())??;
        parts.push(st);
        subs.extend(s);
    }
    let published = published?;
    let pub_end = published.iter().map(|p| p.st.end).max().unwrap_or(t0);
    let publish_errors: u64 = published.iter().map(|p| p.st.errors.total()).sum();
    for part in parts.iter_mut() {
        part.end = pub_end; // rates are over the publishing time, not the drain
    }
    parts.extend(published.into_iter().map(|p| p.st));
    let counts = count(subs.iter().map(|s| (&s.channels[..], &s.tally, s.closed)), &per_channel);
    report_run(o, parts, &counts, publish_errors, drained_s)
}

/// The options of kvload's report header that describe this run.
fn report_options(o: &PubsubOptions) -> crate::cli::Options {
    crate::cli::Options {
        host: o.host.clone(),
        port: o.port,
        clients: o.subscribers + o.publishers,
        threads: o.threads.min(o.subscribers) + o.publishers,
        pipeline: o.pipeline,
        requests: match o.bound {
            Bound::Messages(n) => n * o.publishers as u64,
            Bound::Seconds(_) => 0,
        },
        duration: match o.bound {
            Bound::Seconds(s) => Some(s),
            Bound::Messages(_) => None,
        },
        data_size: o.data_size,
        rps: o.rps,
        quiet: o.quiet,
        json: o.json.clone(),
        command: vec![format!("{} {}", o.mode.publish(), o.mode.name().to_uppercase())],
        keyspace: None,
        ..crate::cli::Options::default()
    }
}

fn report_run(o: &PubsubOptions, parts: Vec<ThreadStats>, c: &Counts, publish_errors: u64, drained_s: f64) -> Result<(), String> {
    let ko = report_options(o);
    let name = format!("PUBSUB {} {}x{} P={}", o.mode.name().to_uppercase(), o.subscribers, o.channels, o.publishers);
    let merged = stats::merge(parts, ko.precision);
    let dur = merged.duration_s.max(1e-9);
    let r = TestResult::new(&ko, name, merged);
    let summary = PubsubJson {
        mode: o.mode.name(),
        subscribers: o.subscribers,
        channels: o.channels,
        channels_per_subscriber: o.per_subscriber.min(o.channels),
        publishers: o.publishers,
        published_rps: c.published as f64 / dur,
        delivered_rps: c.delivered as f64 / dur,
        fanout: if c.published > 0 { c.delivered as f64 / c.published as f64 } else { 0.0 },
        publish_errors,
        drain_s: drained_s,
        counts: c.clone(),
    };
    if !o.quiet {
        report::print(&ko, &r, &[]);
    }
    println!(
        "pubsub: published {} ({:.2}/s), delivered {} ({:.2}/s, fan-out {:.2}), expected {}, lost {}, duplicated {}, disconnected {}, p50 {:.3} ms p99 {:.3} ms",
        c.published, summary.published_rps, c.delivered, summary.delivered_rps, summary.fanout, c.expected, c.lost, c.duplicated, c.disconnected, r.corrected.p50, r.corrected.p99
    );
    if let Some(path) = &o.json {
        let io = IoUsed { kind: IoKind::Epoll, note: Some("pubsub: subscribers on epoll threads, blocking publisher threads".into()) };
        let mut v = serde_json::to_value(report::report(&ko, &io, std::slice::from_ref(&r))).map_err(|e| e.to_string())?;
        v["tests"][0]["pubsub"] = serde_json::to_value(&summary).map_err(|e| e.to_string())?;
        let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

/// The `pubsub` object of the report's test (docs/KVLOAD.md).
#[derive(serde::Serialize)]
struct PubsubJson {
    mode: &'static str,
    subscribers: usize,
    channels: usize,
    channels_per_subscriber: usize,
    publishers: usize,
    published_rps: f64,
    delivered_rps: f64,
    fanout: f64,
    publish_errors: u64,
    drain_s: f64,
    #[serde(flatten)]
    counts: Counts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_give_kind_and_payload() {
        let m = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
        assert_eq!(frame_parts(m), Some((&b"message"[..], &b"hello"[..])));
        let p = b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$3\r\nabc\r\n";
        assert_eq!(frame_parts(p), Some((&b"pmessage"[..], &b"abc"[..])));
        let s = b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n";
        assert_eq!(frame_parts(s), Some((&b"subscribe"[..], &b"1"[..])));
        let push = b">3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$0\r\n\r\n";
        assert_eq!(frame_parts(push), Some((&b"smessage"[..], &b""[..])));
        assert_eq!(frame_parts(b"+OK\r\n"), None);
    }

    #[test]
    fn pattern_names_match_only_their_channel() {
        let o = PubsubOptions { mode: Mode::Psubscribe, prefix: "a*b?".into(), ..PubsubOptions::default() };
        assert_eq!(subscription_name(&o, 0), "a\\*b\\?1");
    }

    #[test]
    fn counts_loss_per_subscriber() {
        let mk = |channels: Vec<usize>, seqs: &[u64]| {
            let mut tally = Tally::new(1);
            for &s in seqs {
                tally.note(0, s);
            }
            (channels, tally)
        };
        let published = [2, 1];
        let tallies = [mk(vec![0], &[0, 2]), mk(vec![0, 1], &[0, 1, 1])];
        let c = count(tallies.iter().enumerate().map(|(i, (ch, t))| (&ch[..], t, i == 0)), &published);
        assert_eq!(c.disconnected, 1);
        assert_eq!(c.published, 3);
        assert_eq!((c.expected, c.delivered, c.lost, c.duplicated, c.subscribers_with_loss), (5, 4, 1, 1, 1));
    }
}
