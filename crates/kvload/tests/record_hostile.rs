//! `kvload record` under hostile traffic (issue 41, docs/RELIABILITY.md): clients that send
//! garbage, half commands, huge bulk lengths, inline lines, big pipelines, or reset their
//! connection; a real valkey-server behind a `Tap` (test code that relays and hashes what
//! each side sent), and `FakeHostileServer`, a fake that replies garbage, closes mid-reply,
//! announces huge bulks, nests aggregates deeply, replies without commands or resets.
//! Every connection's bytes must reach the other side byte for byte (a reset side: a
//! prefix), the proxy must not panic, must count the connections it could not record and
//! stay within its memory cap. `KVLOAD_HOSTILE_CONNS` sets the connections per server (CI:
//! 60; `KVLOAD_HOSTILE_CONNS=1000 cargo test --profile test-release --test record_hostile`
//! for the full run); `KVLOAD_BIN` runs another kvload binary (an older one, to see the test
//! fail).

#[allow(unused_macros)]
mod common;

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::Hasher;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{free_port, scratch_dir, serial, Server};

/// The proxy's stated cap per connection (record.rs MAX_PENDING + replies.rs MAX_QUEUED) and
/// what a process of a few threads holds besides.
const CAP_PER_CONN_MIB: u64 = 32;
const BASE_MIB: u64 = 64;

/// What went one way on a connection: its length and hash (and the bytes when small).
#[derive(Clone, Debug, Default, PartialEq)]
struct Digest {
    len: u64,
    hash: u64,
}

/// Hashes a byte stream as it passes.
#[derive(Default)]
struct Hashing {
    h: DefaultHasher,
    len: u64,
}

impl Hashing {
    fn add(&mut self, b: &[u8]) {
        self.h.write(b);
        self.len += b.len() as u64;
    }
    fn digest(&self) -> Digest {
        Digest { len: self.len, hash: self.h.finish() }
    }
}

fn digest_of(b: &[u8]) -> Digest {
    let mut h = Hashing::default();
    h.add(b);
    h.digest()
}

/// A server side's view of a connection, by the id in the client's first line:
/// (bytes received, bytes sent).
type Seen = Arc<Mutex<HashMap<String, (Digest, Digest)>>>;

/// The id line every hostile client starts with (an inline ECHO the real server answers).
fn id_line(id: usize) -> Vec<u8> {
    format!("ECHO id:{id:06}\r\n").into_bytes()
}

fn id_of(first: &[u8]) -> Option<String> {
    let s = first.windows(8).position(|w| w == b"ECHO id:")?;
    first.get(s + 5..s + 14).map(|b| String::from_utf8_lossy(b).into_owned())
}

/// Reads `s` to its end (or an error), hashing; the first bytes are kept for the id.
fn drain(s: &mut TcpStream, h: &mut Hashing, first: &mut Vec<u8>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if first.len() < 32 {
                    first.extend_from_slice(&buf[..n.min(32)]);
                }
                h.add(&buf[..n]);
            }
        }
    }
}

// ---------- the tap in front of the real server ----------

/// A real server behind the hashing tap: the server (stopped when dropped), the tap's port,
/// what the tap saw per connection, and the tap's thread.
fn tapped_server() -> (Server, u16, Seen, JoinHandle<()>) {
    let server = Server::start(&[]);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen: Seen = Arc::default();
    let tap = tap(listener, server.port, seen.clone());
    (server, port, seen, tap)
}

/// Relays every connection to `upstream`, hashing both ways (test code, not a server).
fn tap(listener: TcpListener, upstream: u16, seen: Seen) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(down) = conn else { return };
            let Ok(up) = TcpStream::connect(("127.0.0.1", upstream)) else { return };
            let seen = seen.clone();
            std::thread::spawn(move || tap_conn(down, up, &seen));
        }
    })
}

fn tap_conn(mut down: TcpStream, up: TcpStream, seen: &Seen) {
    let (mut up_r, mut down_w) = (up.try_clone().expect("clone"), down.try_clone().expect("clone"));
    let back = std::thread::spawn(move || {
        let mut h = Hashing::default();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = up_r.read(&mut buf) {
            h.add(&buf[..n]);
            if down_w.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = down_w.shutdown(Shutdown::Write);
        h
    });
    let (mut h, mut first) = (Hashing::default(), Vec::new());
    let mut up_w = up;
    let mut buf = vec![0u8; 64 * 1024];
    let mut up_open = true;
    while let Ok(n @ 1..) = down.read(&mut buf) {
        if first.len() < 32 {
            first.extend_from_slice(&buf[..n.min(32)]);
        }
        h.add(&buf[..n]);
        up_open = up_open && up_w.write_all(&buf[..n]).is_ok();
    }
    let _ = up_w.shutdown(Shutdown::Write);
    let sent = back.join().expect("tap thread").digest();
    if let Some(id) = id_of(&first) {
        seen.lock().expect("lock").insert(id, (h.digest(), sent));
    }
}

// ---------- the fake hostile server ----------

/// What `FakeHostileServer` does on a connection, by the client's id.
fn fake_reply(id: usize) -> (Vec<u8>, bool) {
    let mut deep = Vec::new();
    (0..50_000).for_each(|_| deep.extend_from_slice(b"*1\r\n"));
    let mut huge = b"$9223372036854775807\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 256 * 1024));
    match id % 7 {
        0 => (b"hello \x00\xff garbage\r\n".repeat(100), false),
        1 => (b"+OK\r\n$100\r\nabc".to_vec(), false),
        2 => (huge, false),
        3 => (deep, false),
        4 => (b"+OK\r\n".repeat(20_000), false),
        5 => (b"$5\r\nhel".to_vec(), true),
        _ => (Vec::new(), false),
    }
}

/// A fake server (it cannot be real: no server replies like this) that reads the client's
/// id line, sends its hostile reply, closes its side (or resets) and reads to the end.
fn fake_hostile_server(listener: TcpListener, seen: Seen) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(s) = conn else { return };
            let seen = seen.clone();
            std::thread::spawn(move || fake_conn(s, &seen));
        }
    })
}

fn fake_conn(mut s: TcpStream, seen: &Seen) {
    let (mut got, mut first) = (Hashing::default(), Vec::new());
    let mut buf = [0u8; 4096];
    while !first.contains(&b'\n') && first.len() < 64 {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                first.extend_from_slice(&buf[..n]);
                got.add(&buf[..n]);
            }
        }
    }
    let Some(id) = id_of(&first) else { return };
    let (reply, reset) = fake_reply(id[3..].parse().unwrap_or(0));
    let sent = if s.write_all(&reply).is_ok() { digest_of(&reply) } else { Digest::default() };
    if reset {
        reset_close(s);
        seen.lock().expect("lock").insert(id, (got.digest(), sent));
        return;
    }
    let _ = s.shutdown(Shutdown::Write);
    drain(&mut s, &mut got, &mut first);
    seen.lock().expect("lock").insert(id, (got.digest(), sent));
}

/// Closes with a reset (SO_LINGER 0).
fn reset_close(s: TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setting a socket option on a socket we own, with a struct of the right size.
    unsafe { libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_LINGER, &l as *const _ as *const libc::c_void, std::mem::size_of::<libc::linger>() as u32) };
    drop(s);
}

// ---------- hostile clients ----------

fn pipeline(n: usize, value: usize) -> Vec<u8> {
    let v = "v".repeat(value);
    let mut out = Vec::new();
    for i in 0..n {
        let k = format!("key:{i}");
        let cmd = if i % 2 == 0 { vec!["SET", &k, &v] } else { vec!["GET", &k] };
        out.extend_from_slice(format!("*{}\r\n", cmd.len()).as_bytes());
        for a in cmd {
            out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
        }
    }
    out
}

/// What client `id` sends after its id line, and whether it then resets.
fn client_bytes(id: usize) -> (Vec<u8>, bool) {
    let mut rng = id as u64 * 0x9e37_79b9_7f4a_7c15 + 1;
    let mut garbage = || {
        (0..4096)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect::<Vec<u8>>()
    };
    match id % 6 {
        0 => (pipeline(1000, 16), false),
        1 => ([b"*x\r\n".to_vec(), garbage()].concat(), false),
        2 => (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc".to_vec(), false),
        3 => ([b"*2\r\n$4\r\nECHO\r\n$536870000\r\n".to_vec(), vec![b'x'; 1 << 20]].concat(), false),
        4 => (b"PING\r\nSET a b\r\n\x01\x02 \xff\r\nGET a\r\n".to_vec(), false),
        _ => ([pipeline(20, 8), b"*2\r\n$3\r\nGET\r\n$1".to_vec()].concat(), true),
    }
}

/// One hostile client through the proxy: (id, what it sent, whether it reset, what it got).
fn client(port: u16, id: usize) -> (String, Vec<u8>, bool, Digest) {
    let (body, reset) = client_bytes(id);
    let sent = [id_line(id), body].concat();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
    s.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    let mut w = s.try_clone().expect("clone");
    let to_send = sent.clone();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&to_send);
        w
    });
    let w = writer.join().expect("writer");
    let (mut got, mut first) = (Hashing::default(), Vec::new());
    if reset {
        std::thread::sleep(Duration::from_millis(20));
        reset_close(w);
    } else {
        let _ = w.shutdown(Shutdown::Write);
        drain(&mut s, &mut got, &mut first);
    }
    (format!("id:{id:06}"), sent, reset, got.digest())
}

// ---------- the proxy ----------

fn kvload_bin() -> String {
    std::env::var("KVLOAD_BIN").unwrap_or_else(|_| common::kvload_bin().to_string())
}

/// `kvload record --replies` from a free port to `upstream`.
fn record(upstream: u16, out: &Path) -> (Child, u16) {
    record_with(upstream, out, &[])
}

/// `kvload record --replies` with more options.
fn record_with(upstream: u16, out: &Path, extra: &[&str]) -> (Child, u16) {
    let port = free_port();
    let child = Command::new(kvload_bin())
        .args(["record", "--replies", "--listen", &format!("127.0.0.1:{port}"), "--upstream", &format!("127.0.0.1:{upstream}")])
        .args(extra)
        .arg("--out")
        .arg(out)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kvload record");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "kvload record did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port)
}

/// The peak resident memory of a process, in MiB (VmHWM).
fn peak_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    kb.unwrap_or(0) / 1024
}

/// SIGINT by pid; the exit code and stderr.
fn stop(mut child: Child) -> (i32, String) {
    // SAFETY: signalling the child we started, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let code = child.wait().map(|s| s.code().unwrap_or(-1)).unwrap_or(-1);
    (code, err)
}

fn connections() -> usize {
    std::env::var("KVLOAD_HOSTILE_CONNS").ok().and_then(|v| v.parse().ok()).unwrap_or(60)
}

/// Runs `n` hostile clients through the proxy, 30 at a time; their views.
fn clients(port: u16, n: usize) -> Vec<(String, Vec<u8>, bool, Digest)> {
    let mut out = Vec::new();
    for wave in (0..n).collect::<Vec<_>>().chunks(30) {
        let hs: Vec<_> = wave.iter().map(|&id| std::thread::spawn(move || client(port, id))).collect();
        out.extend(hs.into_iter().map(|h| h.join().expect("client")));
    }
    out
}

/// Every client's bytes reached the server and the server's reached it (a reset side: a
/// prefix); returns how many connections were compared whole.
fn check_bytes(views: &[(String, Vec<u8>, bool, Digest)], seen: &Seen, server_resets: impl Fn(usize) -> bool) -> usize {
    std::thread::sleep(Duration::from_millis(300));
    let seen = seen.lock().expect("lock");
    let mut whole = 0;
    for (i, (id, sent, reset, got)) in views.iter().enumerate() {
        let Some((received, replied)) = seen.get(id) else {
            assert!(*reset, "{id}: the server never saw this client");
            continue;
        };
        let n = (received.len as usize).min(sent.len());
        assert_eq!(received, &digest_of(&sent[..n]), "{id}: the server got other bytes than a prefix of what the client sent");
        if *reset || server_resets(i) {
            continue;
        }
        assert_eq!(received.len as usize, sent.len(), "{id}: the server got {} of the {} bytes sent", received.len, sent.len());
        assert_eq!(got, replied, "{id}: the client got other bytes than the server sent");
        whole += 1;
    }
    whole
}

fn hostile_run(upstream: u16, seen: &Seen, name: &str, server_resets: impl Fn(usize) -> bool) {
    let dir = scratch_dir(name);
    let (child, port) = record(upstream, &dir.join("t.kvt"));
    let pid = child.id();
    let n = connections();
    let start = Instant::now();
    let views = clients(port, n);
    let peak = peak_mib(pid);
    let (code, err) = stop(child);
    assert!(!err.contains("panicked"), "kvload record panicked: {err}");
    assert_eq!(code, 0, "kvload record: {err}");
    let whole = check_bytes(&views, seen, server_resets);
    assert!(whole >= n / 2, "only {whole} of {n} connections compared whole");
    assert!(err.contains("not recorded in full"), "garbage clients are counted as unrecorded: {err}");
    let info = Command::new(kvload_bin()).arg("trace-info").arg(dir.join("t.kvt")).output().expect("trace-info");
    assert!(info.status.success(), "the trace left behind reads: {}", String::from_utf8_lossy(&info.stderr));
    // Connections run 30 at a time: the cap holds for those live together.
    let cap = BASE_MIB + 30 * CAP_PER_CONN_MIB;
    assert!(peak <= cap, "peak RSS {peak} MiB over {cap} MiB");
    eprintln!("{name}: {n} hostile connections in {:.1} s, {whole} compared whole, proxy peak RSS {peak} MiB", start.elapsed().as_secs_f64());
}

#[test]
fn hostile_clients_through_the_proxy_to_a_real_server() {
    let _g = serial();
    let (server, port, seen, _tap) = tapped_server();
    hostile_run(port, &seen, "hostile-real", |_| false);
    assert_eq!(server.cmd(&["PING"]), common::Resp::Simple("PONG".into()), "the server is still up");
}

#[test]
fn hostile_clients_through_the_proxy_to_a_fake_hostile_server() {
    let _g = serial();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen: Seen = Arc::default();
    let _fake = fake_hostile_server(listener, seen.clone());
    hostile_run(port, &seen, "hostile-fake", |i| i % 7 == 5);
}

/// A client pipelining 100,000 commands in one write through `record --replies` to a real
/// server: every reply arrives, and the proxy's peak RSS (printed: docs/RELIABILITY.md)
/// stays within one connection's cap.
#[test]
fn a_pipeline_of_100k_commands_stays_within_the_cap() {
    let _g = serial();
    let server = Server::start(&[]);
    let dir = scratch_dir("hostile-pipeline");
    let (child, port) = record(server.port, &dir.join("t.kvt"));
    let pid = child.id();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let mut w = s.try_clone().expect("clone");
    let writer = std::thread::spawn(move || w.write_all(&pipeline(100_000, 32)).expect("send the pipeline"));
    // SETs answer +OK, GETs of keys never set $-1: 5 bytes each.
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0;
    while got < 100_000 * 5 {
        let n = s.read(&mut buf).expect("replies");
        assert!(n > 0, "the proxy closed after {got} reply bytes");
        got += n;
    }
    writer.join().expect("writer");
    let peak = peak_mib(pid);
    let (code, err) = stop(child);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    eprintln!("100k-command pipeline: {got} reply bytes, proxy peak RSS {peak} MiB");
    assert!(peak <= BASE_MIB + CAP_PER_CONN_MIB, "peak RSS {peak} MiB");
}

/// One command of 128 MiB (its bulk length says 400 MB) through `record --replies` to a real
/// server: forwarded whole, not buffered — the connection is counted as unrecorded and the
/// proxy's peak RSS stays within one connection's cap.
#[test]
fn a_command_over_the_cap_is_forwarded_not_buffered() {
    let _g = serial();
    let (_server, tap_port, seen, _tap) = tapped_server();
    let dir = scratch_dir("hostile-big");
    let (child, port) = record(tap_port, &dir.join("t.kvt"));
    let pid = child.id();
    let mut sent = id_line(7);
    sent.extend_from_slice(b"*2\r\n$4\r\nECHO\r\n$400000000\r\n");
    sent.extend(std::iter::repeat_n(b'x', 128 << 20));
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.write_all(&sent).expect("send");
    s.shutdown(Shutdown::Write).expect("shutdown");
    let (mut got, mut first) = (Hashing::default(), Vec::new());
    drain(&mut s, &mut got, &mut first);
    let peak = peak_mib(pid);
    let (code, err) = stop(child);
    assert_eq!(code, 0, "{err}");
    std::thread::sleep(Duration::from_millis(300));
    let (received, replied) = seen.lock().expect("lock").get("id:000007").cloned().expect("the tap saw the connection");
    assert_eq!(received, digest_of(&sent), "the server got every byte");
    assert_eq!(got.digest(), replied, "the client got every byte");
    eprintln!("a 128 MiB command: proxy peak RSS {peak} MiB");
    assert!(peak <= BASE_MIB + CAP_PER_CONN_MIB, "peak RSS {peak} MiB over one connection's cap");
    assert!(err.contains("1 connections not recorded in full"), "{err}");
}

/// The trace on a FIFO nobody reads (the writer blocks: a disk that fell behind) while one
/// client pipelines 40,000 SETs of 4 KiB (160 MiB) through `record --replies` to a real
/// server behind the tap: every byte is forwarded both ways, the proxy's peak RSS stays
/// within --queue-bytes (8 MiB) plus one connection's cap, and the records that did not fit
/// are dropped and counted — on stderr and in the trace's gap records, which with the
/// commands written make every command sent. With the bound off (`--queue-bytes` of 100 GB)
/// the peak RSS goes past 160 MiB and the test fails.
#[test]
fn a_writer_behind_drops_records_counted_and_forwards_every_byte() {
    let _g = serial();
    let (_server, tap_port, seen, _tap) = tapped_server();
    let dir = scratch_dir("hostile-slow-writer");
    let fifo = dir.join("t.fifo");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8 path")).expect("path");
    // SAFETY: a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    // The trace's reader: opens the FIFO at once (kvload's open waits for it), reads only
    // when told (or when the test ends early).
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::File::open(&fifo).expect("open the FIFO");
            let _ = wait.recv();
            let mut trace = Vec::new();
            f.read_to_end(&mut trace).expect("read the FIFO");
            trace
        })
    };
    let (child, port) = record_with(tap_port, &fifo, &["--queue-bytes", "8388608"]);
    let pid = child.id();
    let value = "v".repeat(4096);
    let mut sent = id_line(3);
    for i in 0..40_000 {
        let k = format!("key:{}", i % 100);
        sent.extend_from_slice(format!("*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n$4096\r\n{value}\r\n", k.len()).as_bytes());
    }
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut w = s.try_clone().expect("clone");
    let to_send = sent.clone();
    let writer = std::thread::spawn(move || {
        w.write_all(&to_send).expect("send the pipeline");
        w.shutdown(Shutdown::Write).expect("shutdown");
    });
    let (mut got, mut first) = (Hashing::default(), Vec::new());
    drain(&mut s, &mut got, &mut first);
    writer.join().expect("writer");
    let peak = peak_mib(pid);
    go.send(()).expect("the reader waits");
    let (code, err) = stop(child);
    let trace = reader.join().expect("reader");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    std::thread::sleep(Duration::from_millis(300));
    let (received, replied) = seen.lock().expect("lock").get("id:000003").cloned().expect("the tap saw the connection");
    assert_eq!(received, digest_of(&sent), "the server got every byte");
    assert_eq!(got.digest(), replied, "the client got every byte");
    assert_eq!(got.len, 15 + 40_000 * 5, "the ECHO's reply and 40,000 +OK");
    eprintln!("a writer behind, 160 MiB pipelined: proxy peak RSS {peak} MiB");
    let cap = BASE_MIB + CAP_PER_CONN_MIB + 8;
    assert!(peak <= cap, "peak RSS {peak} MiB over {cap} MiB (--queue-bytes 8 MiB and one connection)");
    let kept = dir.join("t.kvt");
    std::fs::write(&kept, &trace).expect("write the trace");
    let info = Command::new(kvload_bin()).arg("trace-info").arg(&kept).output().expect("trace-info");
    assert!(info.status.success(), "the trace reads: {}", String::from_utf8_lossy(&info.stderr));
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("trace-info's JSON");
    let dropped = info["dropped"]["records"].as_u64().expect("the trace has gaps");
    assert!(dropped > 0, "{info}");
    assert_eq!(info["dropped"]["gaps"][0]["conn"], 1, "the gap is the connection's (0: record_with's probe)");
    let written = info["commands"].as_u64().expect("commands");
    assert_eq!(written + dropped, 40_001, "every command is in the trace or counted as dropped");
    assert!(err.contains(&format!("the trace is incomplete: {dropped} commands")), "{err}");
    assert!(err.contains(&format!("connection 1: {dropped}")), "counted per connection: {err}");
    eprintln!("  {written} commands in the trace, {dropped} dropped and counted");
}
