//! trace::record: `kvload record`, a recording TCP proxy. Each client connection gets its own
//! upstream connection and two forwarding threads; bytes are forwarded untouched (the
//! client's before they are parsed), and each complete command parsed from the client stream
//! goes to one writer thread as a trace record. Commands of one read share its timestamp, so
//! pipelines keep their boundaries. The writer appends whole records only: when the disk is
//! full (or --max-bytes is reached) it cuts the file back to the last whole record and the
//! recording ends with a valid trace. With `--replies` the upstream → client thread also
//! finds each reply's end and the connection's `replies::Matcher` pairs it with its command
//! (reply size and latency in the record, docs/TRACES.md). The records waiting for the
//! writer are bounded in bytes across connections (`queue::Budget`, --queue-bytes): when the
//! writer falls behind, what does not fit is dropped from the trace and counted, never waited
//! for (a gap record marks it).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::exit;

use super::format::{self, Batch, Header};
use super::options::{parse_record, RecordOptions, RECORD_HELP};
use super::queue::{Budget, ConnTx};
use super::replies::{self, Matcher, Scanner};

static STOP: AtomicBool = AtomicBool::new(false);

/// The memory a connection may hold beyond its two 64 KiB read buffers and its threads'
/// stacks (docs/TRACES.md, "Hostile traffic"): an incomplete client command of at most
/// `MAX_PENDING` bytes (a longer one, or bytes that are no command, end the connection's
/// recording: it is forwarded only and counted as unrecorded) and, with `--replies`,
/// `replies::MAX_QUEUED` bytes of commands and replies waiting to be paired.
pub const MAX_PENDING: usize = 16 << 20;
/// Each forwarding thread's stack (they hold no large frame).
const STACK: usize = 256 << 10;

/// Connections whose commands stopped being recorded (unparsable or over `MAX_PENDING`),
/// and those whose replies stopped being paired (unparsable server bytes, over the queue).
#[derive(Default)]
struct Counts {
    unrecorded: AtomicU32,
    unpaired: AtomicU32,
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn main(argv: &[String]) -> i32 {
    let o = match exit::options(parse_record(argv), "record", RECORD_HELP) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match run(&o) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kvload record: {e}");
            1
        }
    }
}

fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

fn run(o: &RecordOptions) -> Result<(), String> {
    // SAFETY: installing async-signal-safe handlers (an atomic store); SIGXFSZ ignored so
    // a file-size limit surfaces as EFBIG like a full disk.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let listener = TcpListener::bind(&o.listen).map_err(|e| format!("cannot listen on {}: {e}", o.listen))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let w = start_writer(o)?;
    eprintln!("kvload record: listening on {}, forwarding to {}", o.listen, o.upstream);
    let conns = accept_loop(o, &listener, &w);
    w.budget.mark_all(&w.tx);
    w.done.store(true, Ordering::SeqCst);
    let (counts, budget) = (w.counts.clone(), w.budget.clone());
    drop(w.tx);
    let summary = w.thread.join().map_err(|_| "the trace writer failed".to_string())?;
    eprintln!("kvload record: {} commands from {conns} connections, {} bytes in {}{}", summary.commands, summary.bytes, o.out, summary.note);
    let (unrecorded, unpaired) = (counts.unrecorded.load(Ordering::SeqCst), counts.unpaired.load(Ordering::SeqCst));
    if unrecorded + unpaired > 0 {
        eprintln!("kvload record: {unrecorded} connections not recorded in full (forwarded only from where their bytes were no command or over {} MiB), {unpaired} with replies not paired", MAX_PENDING >> 20);
    }
    report_drops(&budget, o.queue_bytes);
    Ok(())
}

/// The records dropped from the trace because the writer was behind: in all and per
/// connection (the first 10), on stderr.
fn report_drops(budget: &Budget, limit: usize) {
    let d = budget.summary();
    if d.records == 0 {
        return;
    }
    let conns: Vec<String> = d.per_conn.iter().take(10).map(|(c, n)| format!("connection {c}: {n}")).collect();
    let more = if d.per_conn.len() > 10 { format!(", {} more", d.per_conn.len() - 10) } else { String::new() };
    eprintln!("kvload record: warning: the trace is incomplete: {} commands ({} bytes) of {} connections dropped, the trace writer being behind with --queue-bytes {limit} waiting ({}{more}); gap records mark them",
              d.records, d.bytes, d.per_conn.len(), conns.join(", "));
}

/// The trace's writer: the channel records go to, its stop flag, its thread, and the
/// recording's start (records' times are from it).
struct Writer {
    tx: Sender<Batch>,
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Summary>,
    start: Instant,
    counts: Arc<Counts>,
    budget: Arc<Budget>,
}

/// Creates the trace with its header and starts the thread that appends records.
fn start_writer(o: &RecordOptions) -> Result<Writer, String> {
    let mut file = std::fs::File::create(&o.out).map_err(|e| format!("cannot create {}: {e}", o.out))?;
    let mut head = Vec::new();
    let start = Instant::now();
    let flags = if o.replies { format::FLAG_REPLIES } else { 0 };
    format::encode_header(&Header { version: format::VERSION, flags, start_unix_us: unix_us() }, &mut head);
    file.write_all(&head).map_err(|e| format!("cannot write {}: {e}", o.out))?;
    let (tx, rx) = mpsc::channel::<Batch>();
    let done = Arc::new(AtomicBool::new(false));
    let budget = Arc::new(Budget::new(o.queue_bytes, start));
    let thread = {
        let (done, budget) = (done.clone(), budget.clone());
        let max = o.max_bytes.unwrap_or(u64::MAX);
        std::thread::spawn(move || write_loop(Out { file, len: head.len() as u64, commands: 0 }, rx, max, &done, &budget))
    };
    Ok(Writer { tx, done, thread, start, counts: Arc::default(), budget })
}

/// Proxies every client that connects until a signal, --duration or the writer ends the
/// recording; returns how many were proxied. Commands still waiting for their reply
/// (--replies) are then logged without it.
fn accept_loop(o: &RecordOptions, listener: &TcpListener, w: &Writer) -> u32 {
    let deadline = o.duration.map(|d| w.start + Duration::from_secs_f64(d));
    let next_id = AtomicU32::new(0);
    let mut conns = 0u32;
    // --replies: the live connections' matchers (those still waiting at the end are flushed).
    let mut matchers: Vec<Arc<Matcher>> = Vec::new();
    while !STOP.load(Ordering::SeqCst) && !w.done.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd we own.
        unsafe { libc::poll(&mut pfd, 1, 20) };
        match listener.accept() {
            Ok((client, _)) => {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                match TcpStream::connect(&o.upstream) {
                    Ok(up) => {
                        conns += 1;
                        proxy(o, w, id, (client, up), &mut matchers);
                    }
                    Err(e) => eprintln!("kvload record: cannot connect to upstream {}: {e}", o.upstream),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => eprintln!("kvload record: accept: {e}"),
        }
    }
    for m in &matchers {
        m.stop();
    }
    conns
}

/// Starts proxying connection `id` (client, upstream); with --replies its matcher joins
/// the live ones.
fn proxy(o: &RecordOptions, w: &Writer, id: u32, (client, up): (TcpStream, TcpStream), matchers: &mut Vec<Arc<Matcher>>) {
    let tx = ConnTx::new(id, w.tx.clone(), w.budget.clone());
    let matcher = o.replies.then(|| Arc::new(Matcher::new(tx.clone())));
    if let Some(m) = &matcher {
        matchers.retain(|m| Arc::strong_count(m) > 1);
        matchers.push(m.clone());
    }
    spawn_conn(Conn { id, tx, start: w.start, matcher, counts: w.counts.clone() }, client, up);
}

/// What a connection's two threads share: its id, the writer, the clock, and with
/// `--replies` its matcher.
#[derive(Clone)]
struct Conn {
    id: u32,
    tx: ConnTx,
    start: Instant,
    matcher: Option<Arc<Matcher>>,
    counts: Arc<Counts>,
}

/// Starts the connection's two threads (a thread that cannot be started is reported and the
/// connection closed, never a panic that would end the proxy).
fn spawn_conn(c: Conn, client: TcpStream, up: TcpStream) {
    let _ = client.set_nodelay(true);
    let _ = up.set_nodelay(true);
    let (Ok(c2), Ok(u2)) = (client.try_clone(), up.try_clone()) else { return };
    let (matcher, counts) = (c.matcher.clone(), c.counts.clone());
    let thread = || std::thread::Builder::new().stack_size(STACK);
    let back = move || {
        let (mut from, mut to) = (u2, c2);
        match matcher {
            Some(m) => copy_and_match(&mut from, &mut to, &m, &counts),
            None => {
                let _ = std::io::copy(&mut from, &mut to);
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    };
    if let Err(e) = thread().spawn(back) {
        eprintln!("kvload record: cannot start a thread ({e}); connection {} closed", c.id);
        return;
    }
    let (id, closer) = (c.id, [client.try_clone(), up.try_clone()]);
    if let Err(e) = thread().spawn(move || forward_and_log(c, client, up)) {
        eprintln!("kvload record: cannot start a thread ({e}); connection {id} closed");
        closer.iter().flatten().for_each(|s| drop(s.shutdown(Shutdown::Both)));
    }
}

/// Upstream → client with `--replies`: forward each read, then find the replies it completed
/// and hand their sizes to the matcher (stamped with the read's time). A client that hung up
/// with commands in flight (an open loop's end, a killed client) leaves them executed: their
/// replies are still read and matched, until the server closes its side.
fn copy_and_match(from: &mut TcpStream, to: &mut TcpStream, m: &Matcher, counts: &Counts) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut scanner = Scanner::default();
    let mut values = Vec::new();
    let mut sizes = Vec::new();
    let mut scanning = true;
    let mut forwarding = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let seen = Instant::now();
        // Matched before they are forwarded: once the client has a reply, so has the
        // recording (a recording stopped right after the client's last reply misses none).
        if scanning {
            values.clear();
            match scanner.feed(&buf[..n], &mut values) {
                Ok(()) => {
                    sizes.clear();
                    sizes.extend(values.iter().filter(|v| !v.1).map(|v| v.0));
                    if !sizes.is_empty() {
                        m.replies(&sizes, seen);
                    }
                }
                Err(e) => {
                    eprintln!("kvload record: unparsable server reply ({e}); this connection's replies are no longer recorded");
                    counts.unpaired.fetch_add(1, Ordering::Relaxed);
                    m.stop();
                    scanning = false;
                }
            }
        }
        if forwarding && to.write_all(&buf[..n]).is_err() {
            forwarding = false;
        }
        if !forwarding && !scanning {
            break;
        }
    }
    if scanning && m.overflowed() {
        counts.unpaired.fetch_add(1, Ordering::Relaxed);
    }
    m.stop();
}

/// Client → upstream: log the complete commands of each read, then forward it. Logged (and
/// handed to the matcher) first, the commands are always there when their replies come
/// back, however soon: a reply the client got is a reply the recording matched.
fn forward_and_log(c: Conn, mut client: TcpStream, mut up: TcpStream) {
    let Conn { id, tx, start, matcher, counts } = c;
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut logging = true;
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let read_at = Instant::now();
        if logging {
            pending.extend_from_slice(&buf[..n]);
            let t_us = read_at.duration_since(start).as_micros() as u64;
            logging = log_commands(&mut pending, id, t_us, read_at, matcher.as_deref(), &tx);
            if logging && pending.len() > MAX_PENDING {
                eprintln!("kvload record: connection {id}: a command over {} MiB; forwarding only from here on", MAX_PENDING >> 20);
                if let Some(m) = &matcher {
                    m.stop();
                }
                logging = false;
            }
            if !logging {
                counts.unrecorded.fetch_add(1, Ordering::Relaxed);
                pending = Vec::new();
            }
        }
        if up.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = up.shutdown(Shutdown::Write);
}

/// Logs the complete commands at the start of `pending` (read at `read_at`, `t_us` into
/// the recording): to the matcher with --replies, else to the writer. False when nothing
/// more of this connection can be logged (unparsable bytes, the writer gone).
fn log_commands(pending: &mut Vec<u8>, id: u32, t_us: u64, read_at: Instant,
                matcher: Option<&Matcher>, tx: &ConnTx) -> bool {
    let r = read_records(pending, id, t_us, matcher.is_some());
    if r.unparsable {
        eprintln!("kvload record: connection {id}: unparsable client bytes; forwarding only from here on");
    }
    if let Some(m) = matcher {
        if !r.recs.is_empty() {
            m.commands(r.recs, read_at, r.breaks);
        }
        if r.unparsable {
            m.stop();
        }
    }
    let sent = tx.send((r.count, r.out));
    !r.unparsable && sent
}

/// The records of the complete commands of one client read.
#[derive(Default)]
struct ReadRecords {
    /// Records for the writer, and how many.
    out: Vec<u8>,
    count: u64,
    /// With --replies: each record on its own (for the matcher), until a command ends
    /// reply matching (`breaks`); the records after it go to `out`.
    recs: Vec<Vec<u8>>,
    breaks: bool,
    /// Bytes that are no command: nothing more of this connection is logged.
    unparsable: bool,
}

/// Encodes the complete commands at the start of `pending` (read at `t_us`) as records of
/// connection `id`, and drops them from it (an incomplete one stays).
fn read_records(pending: &mut Vec<u8>, id: u32, t_us: u64, matching: bool) -> ReadRecords {
    let mut r = ReadRecords::default();
    let mut pos = 0;
    loop {
        match parse_command(&pending[pos..]) {
            Ok(Some((used, args))) => {
                if !args.is_empty() {
                    if matching && !r.breaks {
                        let mut rec = Vec::new();
                        format::encode_record(id, t_us, &args, None, &mut rec);
                        r.recs.push(rec);
                        r.breaks = replies::breaks_matching(&args);
                    } else {
                        format::encode_record(id, t_us, &args, None, &mut r.out);
                        r.count += 1;
                    }
                }
                pos += used;
            }
            Ok(None) => break,
            Err(()) => {
                r.unparsable = true;
                break;
            }
        }
    }
    pending.drain(..pos);
    r
}

fn num(b: &[u8]) -> Result<usize, ()> {
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    std::str::from_utf8(b).map_err(|_| ())?.parse().map_err(|_| ())
}

fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?.windows(2).position(|w| w == b"\r\n").map(|p| from + p)
}

/// A parsed command: bytes consumed and its arguments.
pub type Parsed<'a> = (usize, Vec<&'a [u8]>);

/// One complete client command at the start of `buf`: a RESP array of bulk strings, or an
/// inline command (a line of words). Ok(None) = incomplete; Err = not the protocol.
pub fn parse_command(buf: &[u8]) -> Result<Option<Parsed<'_>>, ()> {
    let Some(&first) = buf.first() else { return Ok(None) };
    if first != b'*' {
        let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
            return if buf.len() > 64 * 1024 { Err(()) } else { Ok(None) };
        };
        let line = &buf[..nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let words = line.split(|&b| b == b' ').filter(|w| !w.is_empty()).collect();
        return Ok(Some((nl + 1, words)));
    }
    let Some(eol) = line_end(buf, 1) else { return Ok(None) };
    let argc = num(&buf[1..eol])?;
    if argc as u64 > format::MAX_ARGS {
        return Err(());
    }
    let mut pos = eol + 2;
    // Each argument takes at least 4 bytes (`$0` CRLF …): no room for more than that.
    let mut args = Vec::with_capacity(argc.min(buf.len() / 4));
    for _ in 0..argc {
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err(());
        }
        let Some(eol) = line_end(buf, pos + 1) else { return Ok(None) };
        let len = num(&buf[pos + 1..eol])?;
        if len as u64 > format::MAX_ARG_LEN {
            return Err(());
        }
        let start = eol + 2;
        if start + len + 2 > buf.len() {
            return Ok(None);
        }
        args.push(&buf[start..start + len]);
        pos = start + len + 2;
    }
    Ok(Some((pos, args)))
}

struct Summary {
    commands: u64,
    bytes: u64,
    note: String,
}

/// Records received but not yet written: the bytes and, per batch, (end offset, commands).
#[derive(Default)]
struct Pending {
    buf: Vec<u8>,
    marks: Vec<(usize, u64)>,
}

/// The trace file: its length is always at the end of a whole record.
struct Out {
    file: std::fs::File,
    len: u64,
    commands: u64,
}

impl Out {
    /// Writes everything pending; on an error (a full disk) the file is cut back to its last
    /// whole record, then as many whole batches as fit are written one by one.
    fn flush(&mut self, p: &mut Pending) -> Result<(), String> {
        use std::io::{Seek, SeekFrom};
        if p.buf.is_empty() {
            return Ok(());
        }
        let res = match self.file.write_all(&p.buf) {
            Ok(()) => {
                self.len += p.buf.len() as u64;
                self.commands += p.marks.iter().map(|m| m.1).sum::<u64>();
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                let _ = self.file.seek(SeekFrom::Start(self.len));
                let mut from = 0;
                for &(end, n) in &p.marks {
                    if self.file.write_all(&p.buf[from..end]).is_err() {
                        let _ = self.file.set_len(self.len);
                        break;
                    }
                    self.len += (end - from) as u64;
                    self.commands += n;
                    from = end;
                }
                Err(e.to_string())
            }
        };
        p.buf.clear();
        p.marks.clear();
        res
    }
}

/// Appends batches; stops at --max-bytes or a write error, leaving whole records only.
/// What it has written (or, stopped, discarded) leaves the queue's bound.
fn write_loop(mut out: Out, rx: Receiver<Batch>, max: u64, done: &AtomicBool, budget: &Budget) -> Summary {
    let mut p = Pending::default();
    let mut note = String::new();
    let mut last_flush = Instant::now();
    let mut stopped = false;
    loop {
        let msg = rx.recv_timeout(Duration::from_millis(100));
        let idle = matches!(msg, Err(RecvTimeoutError::Timeout));
        match msg {
            Ok((n, rec)) if !stopped => {
                if out.len + (p.buf.len() + rec.len()) as u64 > max {
                    note = format!(" (stopped: --max-bytes {max} reached)");
                    stopped = true;
                    done.store(true, Ordering::SeqCst);
                    budget.release(rec.len());
                } else {
                    p.buf.extend_from_slice(&rec);
                    p.marks.push((p.buf.len(), n));
                }
            }
            Ok((_, rec)) => budget.release(rec.len()),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if p.buf.len() >= 256 * 1024 || last_flush.elapsed() >= Duration::from_millis(200) {
            last_flush = Instant::now();
            let held = p.buf.len();
            let res = out.flush(&mut p);
            budget.release(held);
            if let Err(e) = res {
                note = format!(" (stopped: cannot write: {e}; the trace keeps the whole records written before)");
                stopped = true;
                done.store(true, Ordering::SeqCst);
            }
        }
        if done.load(Ordering::SeqCst) && idle {
            break;
        }
    }
    if let Err(e) = out.flush(&mut p) {
        note = format!(" (stopped: cannot write: {e}; the trace keeps the whole records written before)");
    }
    let _ = out.file.sync_all();
    if !note.is_empty() {
        eprintln!("kvload record: warning:{note}");
    }
    Summary { commands: out.commands, bytes: out.len, note }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_resp_and_inline_commands() {
        let b = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING x\r\n*1\r\n$4\r\nPI";
        let (n, a) = parse_command(b).unwrap().unwrap();
        assert_eq!(a, vec![&b"GET"[..], b"k"]);
        let (m, a) = parse_command(&b[n..]).unwrap().unwrap();
        assert_eq!(a, vec![&b"PING"[..], b"x"]);
        assert_eq!(parse_command(&b[n + m..]), Ok(None));
        assert_eq!(parse_command(b"*1\r\n+x\r\n"), Err(()));
    }
}
