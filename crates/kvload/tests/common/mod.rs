//! Helpers for integration tests: real valkey-server processes, a tiny RESP client.
#![allow(dead_code)]

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

pub fn kvload(args: &[&str]) -> Output {
    Command::new(kvload_bin()).args(args).output().expect("run kvload")
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
