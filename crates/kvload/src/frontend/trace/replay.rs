//! trace::replay: `kvload replay TRACE`. Each recorded connection becomes a connection.
//! Open loop (--speed F): a sender thread per connection writes each batch (the commands of
//! one recorded read, or a whole MULTI…EXEC) at its recorded time / F, and a receiver thread
//! matches replies in order, measuring latency from the intended send time (coordinated
//! omission corrected) and from the actual send (service time). `--speed max`: a closed loop
//! per connection (send a batch, wait for its replies), keeping order and pipelining.
//! Results use kvload's histograms and its JSON report (one test named `REPLAY <file>`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use crate::base::clock;
use crate::base::event_loop::{IoKind, IoUsed};
use crate::base::exit;
use crate::base::resp::{self, encode_into, Kind};
use crate::engine::stats::{self, ThreadStats};
use crate::report::{self, RunInfo, TestResult};

use super::file::{self, Trace};
use super::format::{Record, MAX_ARG_LEN};
use super::options::{parse_replay, ReplayOptions, Speed, REPLAY_HELP};
use super::replies::unreplayable;

pub fn main(argv: &[String]) -> i32 {
    let mut o = match exit::options(parse_replay(argv), "replay", REPLAY_HELP) {
        Ok(o) => o,
        Err(code) => return code,
    };
    if o.password.is_none() {
        o.password = std::env::var(crate::base::session::AUTH_ENV).ok().filter(|v| !v.is_empty());
    }
    if o.user.is_some() && o.password.is_none() {
        return exit::bad_input("replay", "--user needs a password (-a or $KVLOAD_AUTH)");
    }
    let trace = match file::load(&o.trace) {
        Ok(t) => t,
        Err(e) => return exit::bad_input("replay", &e),
    };
    if trace.records.is_empty() {
        return exit::bad_input("replay", &format!("trace {} has no commands", o.trace));
    }
    if let Some(e) = unreplayable(&trace.records) {
        return exit::bad_input("replay", &format!("trace {}: {e}", o.trace));
    }
    if !trace.gaps.is_empty() {
        let n = trace.gaps.iter().fold(0u64, |n, g| n.saturating_add(g.records));
        eprintln!("kvload replay: warning: trace {} is incomplete: {n} commands were dropped while it was recorded ({} gaps; kvload trace-info lists them)", o.trace, trace.gaps.len());
    }
    match run(&o, &trace) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kvload replay: {e}");
            1
        }
    }
}

/// Commands of one connection sent together: one recorded read, or MULTI…EXEC.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Batch {
    pub due_us: u64,
    pub bytes: Vec<u8>,
    pub n: usize,
}

fn is(a: &[u8], name: &str) -> bool {
    a.eq_ignore_ascii_case(name.as_bytes())
}

/// Groups records into per-connection batches; times are offsets from the first command.
/// `join_same_time`: commands of a connection with the same time are one pipeline (kvload
/// traces; MONITOR captures have no pipelining boundaries).
pub fn batches(records: &[Record], join_same_time: bool) -> BTreeMap<u32, Vec<Batch>> {
    let t_first = records.iter().map(|r| r.t_us).min().unwrap_or(0);
    let mut out: BTreeMap<u32, Vec<Batch>> = BTreeMap::new();
    let mut in_multi: HashSet<u32> = HashSet::new();
    for r in records {
        let due = r.t_us - t_first;
        let list = out.entry(r.conn).or_default();
        let name = &r.args[0];
        let multi = in_multi.contains(&r.conn);
        let join = match list.last() {
            Some(last) => multi || (join_same_time && last.due_us == due && !is(name, "MULTI")),
            None => false,
        };
        if !join {
            list.push(Batch { due_us: due, bytes: Vec::new(), n: 0 });
        }
        let b = list.last_mut().expect("pushed");
        encode_into(&r.args, &mut b.bytes);
        b.n += 1;
        if is(name, "MULTI") {
            in_multi.insert(r.conn);
        } else if is(name, "EXEC") || is(name, "DISCARD") {
            in_multi.remove(&r.conn);
        }
    }
    out
}

const READS: &[&str] = &["GET", "MGET", "GETEX", "GETDEL", "STRLEN", "GETRANGE", "SUBSTR"];

/// The value length of a bulk-string reply of `size` bytes (`$N\r\n` + N bytes + `\r\n`);
/// None for a null (`$-1\r\n`, RESP3 `_\r\n`), any other reply, or a value over the
/// server's 512 MiB bulk limit (a corrupted size: seeding would allocate it).
pub fn bulk_value_len(size: u64) -> Option<usize> {
    (1..=20u32).find_map(|digits| {
        let n = size.checked_sub(5 + digits as u64)?;
        (n.to_string().len() == digits as usize && n <= MAX_ARG_LEN).then_some(n as usize)
    })
}

/// Keys read (by a string read command) before any command of the trace touched them, with
/// the value size of the trace's first SET-like write of the key, else the size of the value
/// a recorded `GET`/`GETEX`/`GETDEL` reply carried (`record --replies`), else `default_size`.
pub fn keys_to_seed(records: &[Record], default_size: usize) -> Vec<(Vec<u8>, usize)> {
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut seed: Vec<(Vec<u8>, Option<usize>)> = Vec::new();
    let mut replied: Vec<Option<usize>> = Vec::new();
    let mut index: HashMap<&[u8], usize> = HashMap::new();
    for r in records {
        let name = String::from_utf8_lossy(&r.args[0]).to_ascii_uppercase();
        let args = &r.args[1..];
        if READS.contains(&name.as_str()) {
            let keys = if name == "MGET" { args } else { &args[..args.len().min(1)] };
            for k in keys {
                if seen.insert(k) {
                    index.insert(k, seed.len());
                    seed.push((k.clone(), None));
                    replied.push(None);
                }
            }
            let value_reply = matches!(name.as_str(), "GET" | "GETEX" | "GETDEL");
            if let (true, Some(k), Some((size, _))) = (value_reply, args.first(), r.reply) {
                if let Some(&i) = index.get(&k[..]) {
                    replied[i] = replied[i].or(bulk_value_len(size));
                }
            }
            continue;
        }
        let pairs: Vec<(&[u8], Option<usize>)> = match name.as_str() {
            "SET" | "SETNX" | "GETSET" | "APPEND" if args.len() >= 2 => vec![(&args[0], Some(args[1].len()))],
            "SETEX" | "PSETEX" if args.len() >= 3 => vec![(&args[0], Some(args[2].len()))],
            "MSET" | "MSETNX" => args.chunks(2).filter(|c| c.len() == 2).map(|c| (&c[0][..], Some(c[1].len()))).collect(),
            _ => args.first().map(|k| vec![(&k[..], None)]).unwrap_or_default(),
        };
        for (k, size) in pairs {
            seen.insert(k);
            if let (Some(&i), Some(s)) = (index.get(k), size) {
                if seed[i].1.is_none() {
                    seed[i].1 = Some(s);
                }
            }
        }
    }
    seed.into_iter().zip(replied).map(|((k, s), got)| (k, s.or(got).unwrap_or(default_size))).collect()
}

fn connect(o: &ReplayOptions) -> Result<TcpStream, String> {
    let mut s = TcpStream::connect((o.host.as_str(), o.port)).map_err(|e| format!("Could not connect to server at {}:{}: {e}", o.host, o.port))?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
    if let Some(password) = &o.password {
        auth(&mut s, o.user.as_deref(), password)?;
    }
    Ok(s)
}

/// AUTH [user] password on a fresh connection, before anything is measured.
fn auth(s: &mut TcpStream, user: Option<&str>, password: &str) -> Result<(), String> {
    let mut args = vec![b"AUTH".to_vec()];
    args.extend(user.map(|u| u.as_bytes().to_vec()));
    args.push(password.as_bytes().to_vec());
    let mut out = Vec::new();
    encode_into(&args, &mut out);
    s.write_all(&out).map_err(|e| format!("AUTH: {e}"))?;
    let mut reply = Vec::new();
    let mut byte = [0u8; 1];
    while !reply.ends_with(b"\r\n") {
        match s.read(&mut byte) {
            Ok(1) => reply.push(byte[0]),
            Ok(_) => return Err("AUTH: the server closed the connection".into()),
            Err(e) => return Err(format!("AUTH: {e}")),
        }
    }
    if reply != b"+OK\r\n" {
        return Err(format!("AUTH failed: {}", String::from_utf8_lossy(&reply).trim()));
    }
    Ok(())
}

/// Reads until `n` replies arrived; calls `each(now, kind, reply bytes)` per reply.
struct Replies {
    buf: Vec<u8>,
    len: usize,
}

impl Replies {
    fn new() -> Self {
        Replies { buf: vec![0u8; 256 * 1024], len: 0 }
    }

    fn read(&mut self, s: &mut TcpStream, mut each: impl FnMut(u64, Kind, &[u8]) -> bool) -> Result<(), String> {
        loop {
            if self.len == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            let got = s.read(&mut self.buf[self.len..]).map_err(|e| format!("reading replies: {e}"))?;
            if got == 0 {
                return Err("the server closed the connection".into());
            }
            self.len += got;
            let now = clock::now();
            let mut pos = 0;
            let mut more = true;
            while more {
                match resp::skip(&self.buf[pos..self.len]).map_err(|e| format!("protocol error: {}", e.0))? {
                    Some((used, kind)) => {
                        if kind != Kind::Push {
                            more = each(now, kind, &self.buf[pos..pos + used]);
                        }
                        pos += used;
                    }
                    None => break,
                }
            }
            self.buf.copy_within(pos..self.len, 0);
            self.len -= pos;
            if !more {
                return Ok(());
            }
        }
    }
}

fn seed_keys(o: &ReplayOptions, keys: &[(Vec<u8>, usize)]) -> Result<(), String> {
    let mut s = connect(o)?;
    let mut r = Replies::new();
    for chunk in keys.chunks(1000) {
        let mut out = Vec::new();
        for (k, size) in chunk {
            encode_into(&[b"SET".to_vec(), k.clone(), vec![b'x'; *size]], &mut out);
        }
        s.write_all(&out).map_err(|e| format!("seeding: {e}"))?;
        let mut left = chunk.len();
        let mut err = None;
        r.read(&mut s, |_, kind, b| {
            if let Kind::Error { .. } = kind {
                err.get_or_insert_with(|| String::from_utf8_lossy(b).trim().to_string());
            }
            left -= 1;
            left > 0
        })?;
        if let Some(e) = err {
            return Err(format!("seeding: the server answered {e}"));
        }
    }
    Ok(())
}

/// Latency bookkeeping of one reply.
fn note(st: &mut ThreadStats, now: u64, intended: u64, sent: u64, kind: Kind, bytes: &[u8]) {
    match kind {
        Kind::Error { class, start, end } => {
            st.note_error(class, &bytes[start..end]);
            st.record_error(now, class);
        }
        _ => st.record(now, now.saturating_sub(intended), now.saturating_sub(sent)),
    }
}

/// A late send: more than 1 ms after its intended time.
const LATE_NS: u64 = 1_000_000;

/// Open loop: a sender thread writes each batch at its intended time (`t0` + its
/// recorded time / `speed`) and passes (intended, sent, commands) on; this thread matches
/// the replies to them in order.
fn open_conn(mut s: TcpStream, batches: Vec<Batch>, t0: u64, speed: f64) -> Result<ThreadStats, String> {
    let (tx, rx) = mpsc::channel::<(u64, u64, usize)>();
    let ws = s.try_clone().map_err(|e| e.to_string())?;
    let total: usize = batches.iter().map(|b| b.n).sum();
    let sender = std::thread::spawn(move || send_on_time(ws, &batches, t0, speed, &tx));
    let mut st = ThreadStats::new(3, true);
    st.start_measuring(t0);
    let fail = if total > 0 { read_open_replies(&mut s, &rx, &mut st, total).err() } else { None };
    st.finish(clock::now());
    if fail.is_some() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    let (u, sy, late) = sender.join().map_err(|_| "a sender thread panicked".to_string())??;
    if let Some(e) = fail {
        return Err(e);
    }
    st.cpu.0 += u;
    st.cpu.1 += sy;
    // its sender never waits for a reply: every late send is its own
    (st.late, st.late_own) = (late, late);
    Ok(st)
}

/// The sender of `open_conn`: returns its CPU time (user, sys) and its late sends.
fn send_on_time(mut ws: TcpStream, batches: &[Batch], t0: u64, speed: f64, tx: &mpsc::Sender<(u64, u64, usize)>) -> Result<(f64, f64, u64), String> {
    let c0 = stats::thread_cpu();
    let mut late = 0;
    for b in batches {
        let intended = t0 + (b.due_us as f64 * 1000.0 / speed) as u64;
        let now = clock::now();
        if now < intended {
            std::thread::sleep(Duration::from_nanos(intended - now));
        }
        let sent = clock::now();
        if sent > intended + LATE_NS {
            late += 1;
        }
        if tx.send((intended, sent, b.n)).is_err() {
            break;
        }
        ws.write_all(&b.bytes).map_err(|e| format!("sending: {e}"))?;
    }
    let c1 = stats::thread_cpu();
    Ok((c1.0 - c0.0, c1.1 - c0.1, late))
}

/// Reads `total` replies, each recorded against the (intended, sent) of its batch.
fn read_open_replies(s: &mut TcpStream, rx: &mpsc::Receiver<(u64, u64, usize)>, st: &mut ThreadStats, total: usize) -> Result<(), String> {
    let mut r = Replies::new();
    let mut cur = (0u64, 0u64, 0usize);
    let mut got = 0usize;
    let mut fail = None;
    r.read(s, |now, kind, bytes| {
        while cur.2 == 0 {
            match rx.recv() {
                Ok(m) => cur = m,
                Err(_) => {
                    fail = Some("a reply to no request".to_string());
                    return false;
                }
            }
        }
        note(st, now, cur.0, cur.1, kind, bytes);
        cur.2 -= 1;
        got += 1;
        got < total
    })?;
    fail.map_or(Ok(()), Err)
}

fn closed_conn(mut s: TcpStream, batches: Vec<Batch>, t0: u64) -> Result<ThreadStats, String> {
    let mut st = ThreadStats::new(3, false);
    st.start_measuring(t0);
    let mut r = Replies::new();
    for b in &batches {
        let sent = clock::now();
        s.write_all(&b.bytes).map_err(|e| format!("sending: {e}"))?;
        let mut left = b.n;
        r.read(&mut s, |now, kind, bytes| {
            note(&mut st, now, sent, sent, kind, bytes);
            left -= 1;
            left > 0
        })?;
    }
    st.finish(clock::now());
    Ok(st)
}

fn run(o: &ReplayOptions, trace: &Trace) -> Result<(), String> {
    if o.seed {
        let keys = keys_to_seed(&trace.records, o.seed_size);
        seed_keys(o, &keys)?;
        if !o.quiet {
            eprintln!("kvload replay: seeded {} keys the trace reads before writing", keys.len());
        }
    }
    let monitor = trace.header.flags & super::format::FLAG_MONITOR != 0;
    let per_conn = batches(&trace.records, !monitor);
    let total: usize = trace.records.len();
    let span_us = trace.records.iter().map(|r| r.t_us).max().unwrap_or(0) - trace.records.iter().map(|r| r.t_us).min().unwrap_or(0);
    let mut streams = Vec::new();
    for (_, b) in per_conn {
        streams.push((connect(o)?, b));
    }
    let nconn = streams.len();
    let parts = replay_conns(o, streams)?;
    let target = match o.speed {
        Speed::Factor(f) if span_us > 0 => Some(total as f64 / (span_us as f64 / 1e6) * f),
        _ => None,
    };
    let ko = RunInfo {
        host: o.host.clone(),
        port: o.port,
        clients: nconn,
        threads: nconn,
        requests: total as u64,
        rps: target,
        quiet: o.quiet,
        tests: vec![format!("REPLAY {}", o.trace)],
        ..RunInfo::default()
    };
    report_replay(o, &ko, parts)
}

/// Replays each connection's batches on its own thread (all starting at one time); their
/// statistics, or the first failure.
fn replay_conns(o: &ReplayOptions, streams: Vec<(TcpStream, Vec<Batch>)>) -> Result<Vec<ThreadStats>, String> {
    let t0 = clock::now() + 20_000_000;
    let handles: Vec<_> = streams
        .into_iter()
        .map(|(s, b)| {
            let speed = o.speed;
            std::thread::spawn(move || match speed {
                Speed::Factor(f) => open_conn(s, b, t0, f),
                Speed::Max => closed_conn(s, b, t0),
            })
        })
        .collect();
    let mut parts = Vec::new();
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(st)) => parts.push(st),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert("a connection thread panicked".into());
            }
        }
    }
    first_err.map_or(Ok(parts), Err)
}

/// The replay's result: kvload's text and, with --json, its JSON report (one test).
fn report_replay(o: &ReplayOptions, ko: &RunInfo, parts: Vec<ThreadStats>) -> Result<(), String> {
    let name = format!("REPLAY {}", std::path::Path::new(&o.trace).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default());
    let merged = stats::merge(parts, ko.precision);
    let r = TestResult::new(ko, name, merged);
    report::print(ko, &r, &[]);
    if let Some(path) = &o.json {
        let io = IoUsed { kind: IoKind::Epoll, note: Some("replay: blocking threads, two per recorded connection".into()) };
        std::fs::write(path, report::json(ko, &io, &[r])).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(conn: u32, t_us: u64, args: &[&str]) -> Record {
        Record { conn, t_us, args: args.iter().map(|a| a.as_bytes().to_vec()).collect(), reply: None }
    }

    #[test]
    fn pipelines_and_multi_exec_stay_together() {
        let r = vec![
            rec(0, 100, &["SET", "a", "1"]),
            rec(0, 100, &["GET", "a"]),
            rec(1, 150, &["MULTI"]),
            rec(0, 200, &["GET", "b"]),
            rec(1, 180, &["INCR", "c"]),
            rec(1, 250, &["EXEC"]),
            rec(1, 250, &["GET", "c"]),
        ];
        let b = batches(&r, true);
        assert_eq!(b[&0].iter().map(|x| (x.due_us, x.n)).collect::<Vec<_>>(), vec![(0, 2), (100, 1)]);
        assert_eq!(b[&1].iter().map(|x| (x.due_us, x.n)).collect::<Vec<_>>(), vec![(50, 3), (150, 1)]);
        assert!(b[&0][0].bytes.starts_with(b"*3\r\n$3\r\nSET\r\n"));
        let m = batches(&r, false);
        assert_eq!(m[&0].len(), 3, "MONITOR: no pipelining boundaries");
    }

    #[test]
    fn seeds_keys_read_before_written() {
        let r = vec![
            rec(0, 0, &["GET", "a"]),
            rec(0, 1, &["SET", "b", "12345"]),
            rec(0, 2, &["GET", "b"]),
            rec(0, 3, &["MGET", "c", "a", "d"]),
            rec(0, 4, &["SET", "a", "xyz"]),
            rec(0, 5, &["SETEX", "c", "10", "1234567"]),
        ];
        let s = keys_to_seed(&r, 32);
        let s: Vec<(String, usize)> = s.into_iter().map(|(k, n)| (String::from_utf8(k).unwrap(), n)).collect();
        assert_eq!(s, vec![("a".into(), 3), ("c".into(), 7), ("d".into(), 32)]);
    }

    /// Found by `props` (a reply size from a corrupted trace): seeding took any size a
    /// GET's recorded reply implied, up to exabytes (a value it would allocate).
    #[test]
    fn a_reply_size_past_the_bulk_limit_does_not_size_a_seed() {
        let mut r = vec![rec(0, 0, &["GET", "k"])];
        r[0].reply = Some((5 + 11 + 10_000_000_000, 1));
        assert_eq!(keys_to_seed(&r, 32), vec![(b"k".to_vec(), 32)]);
    }

    #[test]
    fn seeds_with_the_recorded_get_reply_size_when_no_write_is_seen() {
        assert_eq!(bulk_value_len(b"$5\r\nhello\r\n".len() as u64), Some(5));
        assert_eq!(bulk_value_len(b"$0\r\n\r\n".len() as u64), Some(0));
        assert_eq!(bulk_value_len(7 + 1000 + 2), Some(1000), "$1000 CRLF, 1000 bytes, CRLF");
        assert_eq!(bulk_value_len(5), None, "$-1 CRLF: a miss");
        assert_eq!(bulk_value_len(3), None, "RESP3 null");
        let mut r = vec![rec(0, 0, &["GET", "a"]), rec(0, 1, &["GET", "b"]), rec(0, 2, &["GET", "b"]), rec(0, 3, &["GET", "c"])];
        r[0].reply = Some((6 + 100 + 2, 40));
        r[1].reply = Some((5, 30));
        r[2].reply = Some((5 + 10 + 2, 30));
        r.push(rec(0, 4, &["SET", "c", "12"]));
        r[3].reply = Some((5 + 50 + 2, 30));
        let s: Vec<(String, usize)> = keys_to_seed(&r, 32).into_iter().map(|(k, n)| (String::from_utf8(k).unwrap(), n)).collect();
        assert_eq!(s, vec![("a".into(), 100), ("b".into(), 10), ("c".into(), 2)], "a write's size wins over a reply's");
    }

    #[test]
    fn pub_sub_and_client_reply_are_refused() {
        assert_eq!(unreplayable(&[rec(0, 0, &["GET", "a"]), rec(1, 1, &["CLIENT", "SETNAME", "x"])]), None);
        let e = unreplayable(&[rec(0, 0, &["GET", "a"]), rec(4, 1, &["subscribe", "ch"])]).unwrap();
        assert!(e.contains("command 2 (SUBSCRIBE on connection 4)"), "{e}");
        assert!(unreplayable(&[rec(0, 0, &["CLIENT", "reply", "OFF"])]).is_some());
    }
}
