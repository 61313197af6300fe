//! Helpers for integration tests: real valkey-server processes, a tiny RESP client.
#![allow(dead_code)]

pub mod schema;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const VALKEY_SERVER: &str = "/usr/bin/valkey-server";
pub const VALKEY_BENCHMARK: &str = "/usr/bin/valkey-benchmark";

static SERIAL: Mutex<()> = Mutex::new(());

/// Tests are timing-sensitive on a 2-core machine: run them one at a time.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

pub fn kvload_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kvload")
}

thread_local! {
    /// The event loop the current test runs kvload with (`on_both_loops!`); None = default.
    static IO: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// Runs `test` with kvload on event loop `io` ("uring" or "epoll").
pub fn with_io(io: &'static str, test: fn()) {
    IO.with(|c| c.set(Some(io)));
    test();
}

/// The loop the current test runs on, if it chose one.
pub fn current_io() -> Option<&'static str> {
    IO.with(|c| c.get())
}

/// `--io <loop>` for kvload's own command line (empty outside `on_both_loops!`).
pub fn io_args() -> Vec<String> {
    current_io().map(|io| vec!["--io".to_string(), io.to_string()]).unwrap_or_default()
}

/// Runs kvload; inside `on_both_loops!` with `--io` (for `memtier` as `--io=<loop>`).
pub fn kvload(args: &[&str]) -> Output {
    let mut cmd = Command::new(kvload_bin());
    match (args.first(), current_io()) {
        (Some(&"memtier"), Some(io)) => cmd.arg("memtier").arg(format!("--io={io}")).args(&args[1..]),
        _ => cmd.args(io_args()).args(args),
    };
    cmd.output().expect("run kvload")
}

/// Declares each named test (a plain `fn()`) twice: `epoll::name` and `uring::name`.
macro_rules! on_both_loops {
    ($($name:ident),* $(,)?) => {
        mod epoll {
            $( #[test] fn $name() { $crate::common::with_io("epoll", super::$name) } )*
        }
        mod uring {
            $( #[test] fn $name() { $crate::common::with_io("uring", super::$name) } )*
        }
    };
}

pub fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvload-test-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// A valkey-server child process killed (by pid) on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Server {
    pub fn start(extra: &[&str]) -> Server {
        let port = free_port();
        Self::start_on(port, &["--port", &port.to_string()], extra, port)
    }

    /// Starts with explicit port args; `probe_port` is polled with PING (plain TCP)
    /// unless it is 0.
    pub fn start_on(port: u16, port_args: &[&str], extra: &[&str], probe_port: u16) -> Server {
        let mut args: Vec<&str> = vec!["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
        args.extend_from_slice(port_args);
        args.extend_from_slice(extra);
        let child = Command::new(VALKEY_SERVER)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn valkey-server");
        let s = Server { child, port };
        if probe_port != 0 {
            s.wait_ready(probe_port);
        }
        s
    }

    fn wait_ready(&self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(v) = try_cmd(port, &["PING"]) {
                if v == Resp::Simple("PONG".into()) {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(30));
        }
        panic!("valkey-server on {port} did not start");
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn cmd(&self, args: &[&str]) -> Resp {
        cmd(self.port, args)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Resp>),
}

impl Resp {
    pub fn text(&self) -> String {
        match self {
            Resp::Simple(s) | Resp::Error(s) => s.clone(),
            Resp::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            Resp::Int(i) => i.to_string(),
            other => format!("{other:?}"),
        }
    }
}

fn read_resp(r: &mut impl BufRead) -> std::io::Result<Resp> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let line = line.trim_end_matches("\r\n");
    let (t, rest) = line.split_at(1);
    Ok(match t {
        "+" => Resp::Simple(rest.into()),
        "-" => Resp::Error(rest.into()),
        ":" => Resp::Int(rest.parse().unwrap_or(0)),
        "$" => {
            let n: i64 = rest.parse().unwrap_or(-1);
            if n < 0 {
                Resp::Bulk(None)
            } else {
                let mut b = vec![0u8; n as usize + 2];
                r.read_exact(&mut b)?;
                b.truncate(n as usize);
                Resp::Bulk(Some(b))
            }
        }
        "*" => {
            let n: i64 = rest.parse().unwrap_or(-1);
            let mut v = Vec::new();
            for _ in 0..n.max(0) {
                v.push(read_resp(r)?);
            }
            Resp::Array(v)
        }
        _ => Resp::Error(format!("unparsed: {line}")),
    })
}

pub fn try_cmd(port: u16, args: &[&str]) -> std::io::Result<Resp> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
    }
    s.write_all(req.as_bytes())?;
    read_resp(&mut BufReader::new(s))
}

pub fn cmd(port: u16, args: &[&str]) -> Resp {
    try_cmd(port, args).expect("command")
}

/// calls=N of `cmdstat_<name>` in INFO commandstats.
pub fn calls(s: &Server, name: &str) -> u64 {
    let info = s.cmd(&["INFO", "commandstats"]).text();
    let key = format!("cmdstat_{name}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&key))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "kvload failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("json file");
    serde_json::from_str(&text).expect("valid json")
}

/// Runs kvload with `--json` (must succeed) and returns the report.
pub fn json_run(name: &str, args: &[&str]) -> serde_json::Value {
    let dir = scratch_dir(name);
    let path = dir.join("out.json");
    let p = path.to_string_lossy().into_owned();
    let mut all: Vec<&str> = vec!["--json", &p];
    all.extend_from_slice(args);
    let out = kvload(&all);
    assert_ok(&out);
    let v = read_json(&path);
    let _ = std::fs::remove_dir_all(&dir);
    schema::assert_valid(&schema::load("kvload-report.schema.json"), &v);
    v
}

pub fn cluster_node(dir: &std::path::Path) -> Server {
    let port = free_port();
    let conf = format!("nodes-{port}.conf");
    let d = dir.to_string_lossy().into_owned();
    Server::start_on(port, &["--port", &port.to_string()], &["--cluster-enabled", "yes", "--cluster-config-file", &conf, "--dir", &d], port)
}

/// Slot ranges of the three primaries `start_cluster` sets up.
pub const CLUSTER_RANGES: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

/// Three primaries on 127.0.0.1 owning CLUSTER_RANGES, once the cluster is ok.
pub fn start_cluster(dir: &std::path::Path) -> Vec<Server> {
    let nodes: Vec<Server> = (0..3).map(|_| cluster_node(dir)).collect();
    for (n, (a, b)) in nodes.iter().zip(CLUSTER_RANGES) {
        assert_eq!(n.cmd(&["CLUSTER", "ADDSLOTSRANGE", &a.to_string(), &b.to_string()]), Resp::Simple("OK".into()));
    }
    for n in &nodes[1..] {
        nodes[0].cmd(&["CLUSTER", "MEET", "127.0.0.1", &n.port.to_string()]);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ok = nodes.iter().all(|n| n.cmd(&["CLUSTER", "INFO"]).text().contains("cluster_state:ok"));
        let known = nodes.iter().all(|n| n.cmd(&["CLUSTER", "SLOTS"]) != Resp::Array(vec![]) && n.cmd(&["CLUSTER", "INFO"]).text().contains("cluster_known_nodes:3"));
        if ok && known {
            break;
        }
        assert!(Instant::now() < deadline, "cluster did not become ok");
        std::thread::sleep(Duration::from_millis(200));
    }
    nodes
}

/// Cluster key slot (CRC16/XMODEM of the key or its first non-empty `{...}`).
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&c| c == b'{') {
        Some(o) => match key[o + 1..].iter().position(|&c| c == b'}') {
            Some(l) if l > 0 => &key[o + 1..o + 1 + l],
            _ => key,
        },
        None => key,
    };
    let mut crc: u16 = 0;
    for &b in hashed {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc % 16384
}

/// Index (into `start_cluster`'s nodes) of the primary owning `key`.
pub fn owner_of(key: &str) -> usize {
    let s = key_slot(key.as_bytes());
    CLUSTER_RANGES.iter().position(|&(a, b)| a <= s && s <= b).expect("slot in a range")
}

/// Sends all commands on one connection (pipelined) and reads every reply.
pub fn pipeline(port: u16, cmds: &[Vec<String>]) -> Vec<Resp> {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let mut req = String::new();
    for c in cmds {
        req.push_str(&format!("*{}\r\n", c.len()));
        for a in c {
            req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
        }
    }
    let mut w = s.try_clone().expect("clone");
    let writer = std::thread::spawn(move || w.write_all(req.as_bytes()).expect("write"));
    let mut r = BufReader::new(s);
    let out = cmds.iter().map(|_| read_resp(&mut r).expect("reply")).collect();
    writer.join().expect("writer");
    out
}

/// Blocking cluster client for tests: runs each command on the primary owning its
/// key (argv[1]), one pipelined connection per node. Replies in command order.
pub fn cluster_pipeline(nodes: &[Server], cmds: &[Vec<String>]) -> Vec<Resp> {
    let mut per: Vec<Vec<(usize, Vec<String>)>> = vec![Vec::new(); nodes.len()];
    for (i, c) in cmds.iter().enumerate() {
        per[owner_of(&c[1])].push((i, c.clone()));
    }
    let mut out = vec![Resp::Bulk(None); cmds.len()];
    for (n, list) in per.into_iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let batch: Vec<Vec<String>> = list.iter().map(|(_, c)| c.clone()).collect();
        for ((i, _), r) in list.iter().zip(pipeline(nodes[n].port, &batch)) {
            out[*i] = r;
        }
    }
    out
}

/// A numeric field of `INFO <section>`: `field` is either `name` (for `name:value`
/// lines) or `name.sub` (for `name:sub=value,...` lines such as commandstats). 0 if absent.
pub fn info_num(port: u16, section: &str, field: &str) -> u64 {
    let text = cmd(port, &["INFO", section]).text();
    let (name, sub) = match field.split_once('.') {
        Some((n, s)) => (n, Some(s)),
        None => (field, None),
    };
    for line in text.lines() {
        let Some(rest) = line.trim_end().strip_prefix(name).and_then(|r| r.strip_prefix(':')) else { continue };
        return match sub {
            None => rest.parse().unwrap_or(0),
            Some(s) => rest
                .split(',')
                .find_map(|kv| kv.strip_prefix(s).and_then(|v| v.strip_prefix('=')))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
        };
    }
    0
}

/// A CA, a server certificate for localhost and a client certificate, as PEM files in `dir`.
pub fn write_certs(dir: &std::path::Path) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("ca key");
    let mut cap = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    cap.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    cap.distinguished_name.push(DnType::CommonName, "kvload test CA");
    let ca_cert = cap.self_signed(&ca_key).expect("ca cert");
    let issuer = Issuer::new(cap, ca_key);
    let key = KeyPair::generate().expect("server key");
    let sp = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    let cert = sp.signed_by(&key, &issuer).expect("server cert");
    let ckey = KeyPair::generate().expect("client key");
    let mut cp = CertificateParams::new(Vec::<String>::new()).expect("client params");
    cp.distinguished_name.push(DnType::CommonName, "kvload client");
    let ccert = cp.signed_by(&ckey, &issuer).expect("client cert");
    std::fs::write(dir.join("client.pem"), ccert.pem()).expect("write");
    std::fs::write(dir.join("client.key"), ckey.serialize_pem()).expect("write");
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).expect("write");
    std::fs::write(dir.join("server.pem"), cert.pem()).expect("write");
    std::fs::write(dir.join("server.key"), key.serialize_pem()).expect("write");
}

/// valkey-server with a TLS-only listener (`auth_clients`: "yes"/"no"); returns it and its port.
pub fn tls_server(dir: &std::path::Path, auth_clients: &str) -> (Server, u16) {
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let port = free_port();
    let ps = port.to_string();
    let s = Server::start_on(
        0,
        &["--port", "0", "--tls-port", &ps],
        &["--tls-cert-file", &p("server.pem"), "--tls-key-file", &p("server.key"), "--tls-ca-cert-file", &p("ca.pem"), "--tls-auth-clients", auth_clients],
        0,
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "TLS server did not listen");
        std::thread::sleep(Duration::from_millis(30));
    }
    (s, port)
}
