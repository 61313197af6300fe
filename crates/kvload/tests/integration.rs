//! Integration tests against real valkey-server processes on 127.0.0.1.

#[macro_use]
mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// p50 (ms) of DEBUG SLEEP 0.005 seen by a minimal blocking client.
fn reference_sleep_p50(port: u16) -> f64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let req = b"*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$5\r\n0.005\r\n";
    let mut buf = [0u8; 64];
    let mut d: Vec<f64> = (0..200)
        .map(|_| {
            let t = Instant::now();
            s.write_all(req).expect("write");
            let _ = s.read(&mut buf).expect("read");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    d.sort_by(|a, b| a.total_cmp(b));
    d[100]
}

/// Corrected p50 of `DEBUG SLEEP 0.005` must be within 5% of 5 ms. On this VM the
/// server's nanosleep alone overshoots by ~0.3 ms under load (any client sees it),
/// so when the 5% bound is missed the run must instead agree within 2% with a
/// minimal blocking client measuring the same server at the same time.
fn debug_sleep_latency_is_accurate() {
    let _g = serial();
    let s = Server::start(&["--enable-debug-command", "yes"]);
    let port = s.port.to_string();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let v = json_run("sleep", &["-p", &port, "-c", "1", "-n", "200", "DEBUG", "SLEEP", "0.005"]);
        let t = &v["tests"][0];
        assert_eq!(t["name"], "DEBUG SLEEP 0.005");
        assert_eq!(t["requests"], 200);
        let p50 = f(&t["latency_ms"]["corrected"]["p50"]);
        assert!(p50 >= 4.99, "p50 {p50} ms below the server-side sleep");
        if (p50 - 5.0).abs() <= 0.25 {
            return;
        }
        let reference = reference_sleep_p50(s.port);
        if (p50 - reference).abs() <= reference * 0.02 {
            eprintln!("note: p50 {p50} ms outside 5% of 5 ms, but the server itself answers in {reference} ms");
            return;
        }
        seen.push((p50, reference));
    }
    panic!("corrected p50 (kvload, reference) not within 5% of 5 ms: {seen:?}");
}

fn open_loop_corrects_coordinated_omission() {
    let _g = serial();
    let s = Server::start(&["--enable-debug-command", "yes"]);
    let port = s.port;
    let stall = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        cmd(port, &["DEBUG", "SLEEP", "1"])
    });
    let ps = port.to_string();
    let v = json_run("open", &["-p", &ps, "-c", "10", "--rps", "2000", "--duration", "6", "-t", "set", "-r", "1000"]);
    let _ = stall.join();
    let t = &v["tests"][0];
    assert_eq!(t["mode"], "open");
    assert_eq!(f(&t["target_rps"]), 2000.0);
    let p90 = f(&t["latency_ms"]["corrected"]["p90"]);
    let svc50 = f(&t["latency_ms"]["service"]["p50"]);
    assert!(p90 >= 100.0, "corrected p90 {p90} ms should reflect the 1 s stall");
    assert!(svc50 < 10.0, "service p50 {svc50} ms should stay small");
    let reqs = t["requests"].as_u64().unwrap_or(0);
    assert!(reqs > 9000, "too few requests: {reqs}");
    assert!(t["late"].as_u64().unwrap_or(0) > 0, "requests during the stall must be late");
}

/// `--arrivals poisson`: the open loop keeps its target rate with exponential gaps, and the
/// JSON says which arrivals ran (uniform by default, null when closed).
fn poisson_arrivals_keep_the_rate() {
    let _g = serial();
    let s = Server::start(&[]);
    let ps = s.port.to_string();
    let args = ["-p", &ps, "-c", "20", "--rps", "4000", "--duration", "3", "-t", "set", "-r", "1000", "-q"];
    let v = json_run("poisson", &[&args[..], &["--arrivals", "poisson"]].concat());
    assert_eq!(v["config"]["arrivals"], "poisson");
    let achieved = f(&v["tests"][0]["achieved_rps"]);
    assert!((achieved - 4000.0).abs() < 400.0, "poisson achieved {achieved} rps of 4000");
    let v = json_run("uniform", &args);
    assert_eq!(v["config"]["arrivals"], "uniform");
    let v = json_run("closed", &["-p", &ps, "-n", "1000", "-t", "set", "-q"]);
    assert!(v["config"]["arrivals"].is_null());
}

fn csv_header_matches_valkey_benchmark() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let args = ["-p", &port, "-t", "set,get,lrange_100,mset", "-n", "2000", "--csv"];
    let ours = kvload(&args);
    assert_ok(&ours);
    let theirs = Command::new(VALKEY_BENCHMARK).args(args).output().expect("valkey-benchmark");
    let ours = stdout(&ours);
    let theirs = stdout(&theirs);
    let our_lines: Vec<&str> = ours.lines().collect();
    let their_lines: Vec<&str> = theirs.lines().filter(|l| l.starts_with('"')).collect();
    assert_eq!(our_lines[0].as_bytes(), their_lines[0].as_bytes());
    let names = |ls: &[&str]| ls.iter().map(|l| l.split(',').next().unwrap_or("").to_string()).collect::<Vec<_>>();
    assert_eq!(names(&our_lines), names(&their_lines));
    for l in &our_lines[1..] {
        assert_eq!(l.split("\",\"").count(), 8, "row shape: {l}");
    }
}

fn cluster_set_get_routes_without_errors() {
    let _g = serial();
    let dir = scratch_dir("cluster");
    let nodes = start_cluster(&dir);
    let port = nodes[0].port.to_string();
    let v = json_run("cluster-run", &["-p", &port, "--cluster", "--threads", "2", "-t", "set,get", "-n", "6000", "-c", "6", "-r", "100000", "-q"]);
    let tests = v["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 2);
    for t in tests {
        assert!(t["requests"].as_u64().unwrap_or(0) > 0, "no requests in {}", t["name"]);
        for k in ["err", "moved", "ask", "timeout", "other"] {
            assert_eq!(t["errors"][k], 0, "errors.{k} in {}", t["name"]);
        }
    }
    for n in &nodes {
        match n.cmd(&["DBSIZE"]) {
            Resp::Int(k) => assert!(k > 0, "node {} got no keys", n.port),
            other => panic!("DBSIZE: {other:?}"),
        }
    }
    check_ask_and_moved(&nodes);
    drop(nodes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Migrates one slot of node 0 to node 1. A key hashtagged into that slot is
/// routed to node 0 by every connection, which answers ASK (retried with ASKING
/// on node 1; counted once as a request). MOVED: a one-key keyspace can only be
/// served by one node, so the other connections give up sampling and get MOVED,
/// which is counted but never as a request.
fn check_ask_and_moved(nodes: &[Server]) {
    let (tag, slot) = (0..1000)
        .map(|i| format!("k{i}"))
        .find_map(|k| match nodes[0].cmd(&["CLUSTER", "KEYSLOT", &k]) {
            Resp::Int(s) if s < 5461 => Some((k, s.to_string())),
            _ => None,
        })
        .expect("a key on node 0");
    let id0 = nodes[0].cmd(&["CLUSTER", "MYID"]).text();
    let id1 = nodes[1].cmd(&["CLUSTER", "MYID"]).text();
    assert_eq!(nodes[1].cmd(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &id0]), Resp::Simple("OK".into()));
    assert_eq!(nodes[0].cmd(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &id1]), Resp::Simple("OK".into()));
    let port = nodes[0].port.to_string();
    let key = format!("{{{tag}}}:__rand_int__");
    let v = json_run("cluster-ask", &["-p", &port, "--cluster", "-c", "3", "-n", "300", "-r", "1000", "-q", "SET", &key, "x"]);
    let t = &v["tests"][0];
    let get = |k: &str| t["errors"][k].as_u64().unwrap_or(u64::MAX);
    let requests = t["requests"].as_u64().unwrap_or(0);
    assert_eq!(get("ask"), 300, "errors: {}", t["errors"]);
    assert_eq!((get("err"), get("moved"), get("other")), (0, 0, 0));
    assert_eq!(requests, get("ask"), "every ASK must be retried successfully");
    let v = json_run("cluster-moved", &["-p", &port, "--cluster", "-c", "3", "-n", "300", "-r", "1", "-q", "SET", "m:__rand_int__", "x"]);
    let t = &v["tests"][0];
    let get = |k: &str| t["errors"][k].as_u64().unwrap_or(u64::MAX);
    let requests = t["requests"].as_u64().unwrap_or(0);
    assert!(get("moved") > 0 && requests > 0, "errors: {}", t["errors"]);
    assert_eq!(requests + get("moved"), 300);
    match nodes[1].cmd(&["KEYS", &format!("{{{tag}}}:*")]) {
        Resp::Array(v) => assert!(!v.is_empty(), "ASK retries must land on node 1"),
        other => panic!("KEYS: {other:?}"),
    }
}

/// TLS runs on the epoll loop only (rustls, no kTLS), so this runs once, with the default
/// `--io` (auto), not on both loops: a `uring::` copy would test epoll a second time.
/// `tls_with_io_uring_asked_runs_on_epoll_and_says_so` covers an explicit `--io uring`.
#[test]
fn tls_with_cacert() {
    let _g = serial();
    let dir = scratch_dir("tls");
    write_certs(&dir);
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (_s, port) = tls_server(&dir, "no");
    let ps = port.to_string();
    let ca = p("ca.pem");
    let v = json_run("tls-run", &["-p", &ps, "--tls", "--sni", "localhost", "--cacert", &ca, "-t", "set", "-n", "3000", "-c", "4"]);
    assert!(v["tests"][0]["requests"].as_u64().unwrap_or(0) > 0);
    assert_eq!(v["config"]["tls"], true);
    // The default loop is io_uring where the kernel allows it; TLS takes epoll, and the
    // report says why (the note goes to stderr only when --io uring was asked for).
    assert_eq!(v["config"]["io"], "epoll");
    assert_eq!(v["config"]["io_note"], "TLS runs on the epoll loop", "{}", v["config"]);
    // Batches larger than rustls' plaintext buffer (4 x 300 KB) must go through.
    let big = json_run("tls-big", &["-p", &ps, "--tls", "--sni", "localhost", "--cacert", &ca, "-t", "set,get", "-d", "300000", "-P", "4", "-n", "40", "-c", "2"]);
    for t in big["tests"].as_array().expect("tests") {
        assert_eq!(t["requests"], 40, "{}", t["name"]);
    }
    // Without the right CA the handshake must fail; --insecure skips verification.
    let bad = kvload(&["-p", &ps, "--tls", "--sni", "localhost", "-t", "set", "-n", "10", "-q"]);
    assert_eq!(bad.status.code(), Some(1));
    let ins = kvload(&["-p", &ps, "--tls", "--insecure", "-t", "set", "-n", "1000", "-q"]);
    assert_ok(&ins);
    // Client certificates (--cert/--key) when the server requires them.
    let (_s2, port2) = tls_server(&dir, "yes");
    let ps2 = port2.to_string();
    let common = ["-p", &ps2, "--tls", "--sni", "localhost", "--cacert", &ca, "-t", "get", "-n", "500", "-q"];
    assert_eq!(kvload(&common).status.code(), Some(1), "server must reject a client without certificate");
    let (cert, key) = (p("client.pem"), p("client.key"));
    let mut with_cert: Vec<&str> = common.to_vec();
    with_cert.extend_from_slice(&["--cert", &cert, "--key", &key]);
    assert_ok(&kvload(&with_cert));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--io uring --tls`: kvload runs the TLS connections on epoll (not io_uring) and says so
/// in the JSON's `io`/`io_note` and once on stderr; the memtier front end does the same.
#[test]
fn tls_with_io_uring_asked_runs_on_epoll_and_says_so() {
    let _g = serial();
    let dir = scratch_dir("tls-uring");
    write_certs(&dir);
    let ca = dir.join("ca.pem").to_string_lossy().into_owned();
    let (_s, port) = tls_server(&dir, "no");
    let ps = port.to_string();
    let json = dir.join("out.json").to_string_lossy().into_owned();
    let out = Command::new(kvload_bin())
        .args(["--io", "uring", "--json", &json, "-p", &ps, "--tls", "--sni", "localhost", "--cacert", &ca, "-t", "set", "-n", "2000", "-c", "4", "-q"])
        .output()
        .expect("run kvload");
    assert_ok(&out);
    let v = read_json(std::path::Path::new(&json));
    assert_eq!(v["tests"][0]["requests"], 2000);
    assert_eq!((&v["config"]["tls"], &v["config"]["io"]), (&serde_json::json!(true), &serde_json::json!("epoll")));
    let note = "--io uring: TLS runs on the epoll loop (rustls, no kTLS)";
    assert_eq!(v["config"]["io_note"], note, "{}", v["config"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches(&format!("kvload: note: {note}")).count(), 1, "one note on stderr: {err}");
    let kv = dir.join("mt-kv.json").to_string_lossy().into_owned();
    let mt = Command::new(kvload_bin())
        .args(["memtier", "--io=uring", "-p", &ps, "--tls", "--sni", "localhost", "--cacert", &ca, "-n", "100", "-c", "2", "-t", "1", "--hide-histogram", "--kvload-json", &kv])
        .output()
        .expect("run kvload memtier");
    assert_ok(&mt);
    let kv = read_json(std::path::Path::new(&kv));
    assert_eq!((&kv["config"]["io"], &kv["config"]["io_note"]), (&serde_json::json!("epoll"), &serde_json::json!(note)));
    assert!(String::from_utf8_lossy(&mt.stderr).contains(note), "{}", String::from_utf8_lossy(&mt.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

fn bad_flags_exit_2() {
    let refused: [&[&str]; 10] = [
        &["--pipelines", "3"],
        &["-c", "0"],
        &["-P", "abc"],
        &["-n"],
        &["-t", "nosuch"],
        &["--reconnect-on-error"],
        &["--reconnect-on-error", "--duration", "1", "--cluster", "--fallback", "127.0.0.1:7002"],
        &["--fallback", "127.0.0.1:7001", "--duration", "1"],
        &["--reconnect-on-error", "--duration", "1", "--fallback", "nohostport"],
        &["--reconnect-on-error", "--duration", "1", "--read-from-replicas", "yes"],
    ];
    for args in refused {
        let o = kvload(args);
        assert_eq!(o.status.code(), Some(2), "args {args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "one-line message for {args:?}: {err}");
    }
    let v = kvload(&["--version"]);
    assert_eq!(stdout(&v), format!("kvload {}\n", env!("CARGO_PKG_VERSION")));
    let h = kvload(&["--help"]);
    assert!(stdout(&h).contains("Usage: kvload"));
}

fn connect_failure_exits_1() {
    let port = free_port().to_string();
    let o = kvload(&["-p", &port, "-t", "set", "-n", "10"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Could not connect to") && err.contains(&format!("127.0.0.1:{port}")), "{err}");
}

fn server_killed_mid_run_exits_nonzero() {
    let _g = serial();
    let mut s = Server::start(&[]);
    let port = s.port.to_string();
    let mut child = Command::new(kvload_bin())
        .args(io_args())
        .args(["-p", &port, "-t", "set", "-c", "10", "--duration", "30", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn kvload");
    std::thread::sleep(Duration::from_millis(1000));
    s.child.kill().expect("SIGKILL server");
    let killed = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(!st.success(), "kvload must fail when the server dies");
            break;
        }
        if killed.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kvload did not exit within 5 s of the server dying");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(killed.elapsed() < Duration::from_secs(5));
}

fn keys_after(seed: &str) -> Vec<String> {
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let o = kvload(&["-p", &port, "--seed", seed, "-r", "1000", "-n", "2000", "-c", "1", "-t", "set", "-q"]);
    assert_ok(&o);
    let mut keys: Vec<String> = match s.cmd(&["KEYS", "*"]) {
        Resp::Array(v) => v.iter().map(Resp::text).collect(),
        other => panic!("KEYS: {other:?}"),
    };
    keys.sort();
    match s.cmd(&["DBSIZE"]) {
        Resp::Int(n) => assert_eq!(n as usize, keys.len()),
        other => panic!("DBSIZE: {other:?}"),
    }
    keys
}

fn fixed_seed_sends_identical_keys() {
    let _g = serial();
    let a = keys_after("7");
    let b = keys_after("7");
    assert!(a.len() > 500 && a.len() < 1000, "unexpected key count {}", a.len());
    assert!(a.iter().all(|k| k.starts_with("key:") && k.len() == 16), "{:?}", &a[..3]);
    assert_eq!(a, b);
    let c = keys_after("8");
    assert_ne!(a, c);
}

fn json_matches_schema() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let v = json_run("schema", &["-p", &port, "-t", "set,get", "-n", "3000", "-P", "4", "-r", "100", "-3", "--seed", "1", "-q"]);
    assert_eq!(v["format"], "kvload");
    assert_eq!(v["version"], 1);
    assert_eq!(v["kvload_version"], env!("CARGO_PKG_VERSION"));
    let cfg = &v["config"];
    for k in ["host", "port", "socket", "clients", "threads", "pipeline", "requests", "duration_s", "warmup_s", "data_size",
        "keyspacelen", "sequential", "seed", "rps", "tls", "cluster", "resp3", "dbnum", "tests"] {
        assert!(cfg.get(k).is_some(), "config.{k} missing");
    }
    assert_eq!(cfg["pipeline"], 4);
    assert_eq!(cfg["resp3"], true);
    let tests = v["tests"].as_array().expect("tests array");
    assert_eq!(tests.len(), 2);
    for t in tests {
        for k in ["name", "mode", "target_rps", "achieved_rps", "requests", "duration_s", "errors", "late", "late_own",
            "unsent", "latency_ms", "histograms", "intervals", "cpu"] {
            assert!(t.get(k).is_some(), "tests[].{k} missing");
        }
        assert_eq!(t["mode"], "closed");
        assert!(t["target_rps"].is_null());
        assert_eq!(t["requests"], 3000);
        assert_eq!(t["late"], 0);
        assert_eq!(t["late_own"], 0);
        assert_eq!(t["unsent"], 0);
        for k in ["err", "moved", "ask", "timeout", "other"] {
            assert_eq!(t["errors"][k], 0);
        }
        for kind in ["corrected", "service"] {
            for k in ["min", "mean", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "max"] {
                assert!(t["latency_ms"][kind][k].is_number(), "latency_ms.{kind}.{k}");
            }
            assert!(t["histograms"][kind].as_str().is_some_and(|s| s.starts_with("HISTFAA")), "histograms.{kind}");
        }
        assert_eq!(t["latency_ms"]["corrected"], t["latency_ms"]["service"]);
        assert_eq!(t["histograms"]["unit"], "us");
        assert_eq!(t["histograms"]["significant_figures"], 3);
        let iv = t["intervals"].as_array().expect("intervals");
        assert!(!iv.is_empty());
        for k in ["t_s", "requests", "rps", "p50_ms", "p99_ms", "errors"] {
            assert!(iv[0].get(k).is_some(), "intervals[].{k}");
        }
        let total: u64 = iv.iter().map(|i| i["requests"].as_u64().unwrap_or(0)).sum();
        assert_eq!(total, 3000);
        for k in ["user_s", "sys_s", "cores_used"] {
            assert!(t["cpu"][k].is_number(), "cpu.{k}");
        }
        assert!(t["cpu"]["saturated"].is_boolean());
    }
    assert_eq!(tests[0]["name"], "SET");
    assert_eq!(tests[1]["name"], "GET");
    // json_run checked the whole report against schema/kvload-report.schema.json;
    // the checker must also catch drift.
    let sch = schema::load("kvload-report.schema.json");
    let mut bad = v.clone();
    bad["tests"][0]["cpu"]["saturated"] = serde_json::json!("no");
    bad["config"]["extra"] = serde_json::json!(1);
    if let Some(o) = bad["tests"][1].as_object_mut() {
        o.remove("histograms");
    }
    let errs = schema::violations(&sch, &bad);
    assert_eq!(errs.len(), 3, "{errs:?}");
}

fn error_replies_are_counted_not_throughput() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    s.cmd(&["SET", "str", "x"]);
    let v = json_run("errors", &["-p", &port, "-n", "500", "-c", "2", "LPUSH", "str", "y"]);
    let t = &v["tests"][0];
    assert_eq!(t["requests"], 0);
    assert_eq!(t["errors"]["other"], 500);
}

/// HdrHistogram interop with the Python package (merged latency in kvperf rests on it):
/// the python in KVLOAD_PY_HDR, else the repository's .venv (scripts/test sets the former).
/// A missing python fails the test: an unchecked interop is not a pass.
fn histogram_decodes_in_python() {
    let py = std::env::var("KVLOAD_PY_HDR").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python").to_string()
    });
    assert!(
        std::path::Path::new(&py).is_file(),
        "no python with hdrhistogram at {py}: run scripts/install.sh or set KVLOAD_PY_HDR"
    );
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let v = json_run("pyhdr", &["-p", &port, "-t", "set", "-n", "5000", "-c", "5"]);
    let t = &v["tests"][0];
    let b64 = t["histograms"]["corrected"].as_str().expect("b64");
    let script = "import sys\nfrom hdrh.histogram import HdrHistogram\nh=HdrHistogram.decode(sys.argv[1])\nprint(h.get_total_count(), h.get_value_at_percentile(99.0))";
    let out = Command::new(py).args(["-c", script, b64]).output().expect("python");
    let text = stdout(&out);
    let mut it = text.split_whitespace();
    assert_eq!(it.next(), Some("5000"), "python said: {text} {}", String::from_utf8_lossy(&out.stderr));
    let p99_us: f64 = it.next().and_then(|s| s.parse().ok()).expect("p99");
    let ours = f(&t["latency_ms"]["corrected"]["p99"]) * 1000.0;
    assert!((p99_us - ours).abs() <= ours * 0.002 + 1.0, "python p99 {p99_us} vs {ours}");
}

fn threads_and_pipeline_issue_exactly_n() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let v = json_run("threads", &["-p", &port, "--threads", "2", "-c", "5", "-n", "1001", "-P", "3", "-t", "incr,mset", "-q"]);
    for t in v["tests"].as_array().expect("tests") {
        assert_eq!(t["requests"], 1001, "{}", t["name"]);
    }
    // INCR without -r hits one key: its final value is the number of INCRs sent.
    assert_eq!(s.cmd(&["GET", "counter:__rand_int__"]).text(), "1001");
    let v = json_run("threads-open", &["-p", &port, "--threads", "2", "-c", "4", "--rps", "2000", "-n", "1000", "-t", "set", "-q"]);
    assert_eq!(v["tests"][0]["requests"], 1000);
    assert_eq!(v["tests"][0]["unsent"], 0);
}

/// RESP3 with client tracking: invalidation pushes arrive between replies and
/// must be skipped, not counted as replies or errors.
fn resp3_push_messages_are_skipped() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let v = json_run("push", &["-p", &port, "-3", "--enable-tracking", "-n", "4000", "-c", "4", "-r", "10", "-q",
        "GET k:__rand_int__ ; SET k:__rand_int__ v"]);
    let t = &v["tests"][0];
    assert_eq!(t["name"], "GET k:__rand_int__ ; SET k:__rand_int__ v");
    assert_eq!(t["requests"], 4000);
    assert_eq!(t["errors"]["err"], 0);
    assert_eq!(t["errors"]["other"], 0);
}

fn sequential_covers_keyspace_exactly() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let o = kvload(&["-p", &port, "--sequential", "-r", "300", "-n", "300", "-c", "3", "--threads", "3", "-t", "set", "-q"]);
    assert_ok(&o);
    assert_eq!(s.cmd(&["DBSIZE"]), Resp::Int(300));
    assert_eq!(s.cmd(&["EXISTS", "key:000000000299"]), Resp::Int(1));
}

/// A sequence shares its keys by default (SET then GET of the same key); with
/// --independent-keys every command draws its own (a 1:1 mix of two SETs writes
/// twice as many keys), and the flag is refused in cluster mode.
fn independent_keys_in_sequences() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let dbsize = |s: &Server| match s.cmd(&["DBSIZE"]) {
        Resp::Int(n) => n,
        other => panic!("DBSIZE: {other:?}"),
    };
    let line = "SET a:__rand_int__ x ; SET a:__rand_int__ y";
    let o = kvload(&["-p", &port, "-r", "1000000000", "-n", "2000", "-c", "1", "-q", line]);
    assert_ok(&o);
    assert_eq!(dbsize(&s), 1000, "shared: each pair writes one key");
    s.cmd(&["FLUSHALL"]);
    let o = kvload(&["-p", &port, "-r", "1000000000", "-n", "2000", "-c", "1", "-q", "--independent-keys", line]);
    assert_ok(&o);
    assert_eq!(dbsize(&s), 2000, "independent: every SET its own key");
    let o = kvload(&["-p", &port, "--cluster", "--independent-keys", "-q", line]);
    assert_eq!(o.status.code(), Some(2));
}

fn io_loop_is_in_the_json() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let v = json_run("io", &["-p", &port, "-t", "set", "-n", "2000", "-q"]);
    assert_eq!(v["config"]["io"], current_io().unwrap_or("uring"));
    assert!(v["config"]["io_note"].is_null());
}

/// Makes io_uring_setup(2) fail with EPERM in the child (seccomp), as a kernel or
/// container that forbids io_uring does.
fn deny_io_uring(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: pre_exec runs in the forked child before exec; only syscalls here.
    unsafe {
        cmd.pre_exec(|| {
            let f = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
            // ld [nr]; jeq #425 (io_uring_setup, same number on x86_64 and aarch64); ret ERRNO(EPERM); ret ALLOW
            let prog = [f(0x20, 0, 0, 0), f(0x15, 0, 1, 425), f(0x06, 0, 0, 0x0005_0000 | libc::EPERM as u32), f(0x06, 0, 0, 0x7fff_0000)];
            let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog as *const libc::sock_fprog as libc::c_ulong, 0, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn refused_io_uring_falls_back_to_epoll_or_exits_2() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let dir = scratch_dir("no-uring");
    let path = dir.join("out.json").to_string_lossy().into_owned();
    let mut auto = Command::new(kvload_bin());
    auto.args(["-p", &port, "-t", "set", "-n", "2000", "-q", "--json", &path]);
    deny_io_uring(&mut auto);
    let out = auto.output().expect("run kvload");
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().filter(|l| l.contains("io_uring is not available")).count(), 1, "one-line note: {err}");
    let v = read_json(std::path::Path::new(&path));
    assert_eq!(v["config"]["io"], "epoll");
    assert!(v["config"]["io_note"].as_str().is_some_and(|n| n.contains("not permitted")), "{}", v["config"]);
    assert_eq!(v["tests"][0]["requests"], 2000);
    let mut explicit = Command::new(kvload_bin());
    explicit.args(["--io", "uring", "-p", &port, "-t", "set", "-n", "100", "-q"]);
    deny_io_uring(&mut explicit);
    let out = explicit.output().expect("run kvload");
    assert_eq!(out.status.code(), Some(2), "explicit --io uring must exit 2 when refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--io epoll"));
    let mut mt = Command::new(kvload_bin());
    mt.args(["memtier", "--io=uring", "-p", &port, "-n", "10", "-c", "1", "-t", "1", "--hide-histogram"]);
    deny_io_uring(&mut mt);
    assert_eq!(mt.output().expect("run kvload").status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

fn keepalive_off_reconnects_per_batch() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let before = info_num(s.port, "stats", "total_connections_received");
    let v = json_run("k0", &["-p", &port, "-k", "0", "-c", "4", "-n", "400", "-P", "2", "-t", "set", "-q"]);
    assert_eq!(v["tests"][0]["requests"], 400);
    let conns = info_num(s.port, "stats", "total_connections_received") - before;
    assert!(conns >= 200, "-k 0 must reconnect after every batch: {conns} connections");
}

/// A relay to `port` that passes the server's replies on in 12-byte pieces, 100 µs apart:
/// a batch's replies arrive over many reads, cut mid-reply. Returns the relay's port.
fn trickle_relay(port: u16) -> u16 {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let relay_port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else { return };
            let _ = client.set_nodelay(true);
            let (mut c_in, mut s_out) = (client.try_clone().expect("clone"), server.try_clone().expect("clone"));
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c_in, &mut s_out);
            });
            let (mut s_in, mut c_out) = (server, client);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s_in.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    for piece in buf[..n].chunks(12) {
                        if c_out.write_all(piece).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_micros(100));
                    }
                }
            });
        }
    });
    relay_port
}

/// Replies of a batch read a few at a time (and cut mid-reply) are each counted and
/// recorded once: the successes of a read are recorded together, so one left unrecorded at
/// the end of a read would show here.
fn replies_split_across_reads_are_all_recorded() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = trickle_relay(s.port).to_string();
    let v = json_run("trickle", &["-p", &port, "-c", "2", "-n", "320", "-P", "16", "-t", "set", "-q"]);
    let t = &v["tests"][0];
    assert_eq!(t["requests"], 320);
    let per_second: u64 = t["intervals"].as_array().map_or(0, |a| a.iter().map(|i| i["requests"].as_u64().unwrap_or(0)).sum());
    assert_eq!(per_second, 320, "{}", t["intervals"]);
}

on_both_loops!(
    replies_split_across_reads_are_all_recorded,
    io_loop_is_in_the_json,
    keepalive_off_reconnects_per_batch,
    debug_sleep_latency_is_accurate,
    open_loop_corrects_coordinated_omission,
    poisson_arrivals_keep_the_rate,
    csv_header_matches_valkey_benchmark,
    cluster_set_get_routes_without_errors,
    bad_flags_exit_2,
    connect_failure_exits_1,
    server_killed_mid_run_exits_nonzero,
    fixed_seed_sends_identical_keys,
    json_matches_schema,
    error_replies_are_counted_not_throughput,
    histogram_decodes_in_python,
    threads_and_pipeline_issue_exactly_n,
    resp3_push_messages_are_skipped,
    sequential_covers_keyspace_exactly,
    independent_keys_in_sequences,
    dataset_rows_fill_fields,
);

/// `--dataset`: with --sequential and -n = rows, every CSV row is sent once (quoted cells
/// with commas and quotes intact, long cells, empty cells), pipelined over several connections;
/// the JSON names the dataset; an unknown column exits 2 naming the columns.
fn dataset_rows_fill_fields() {
    let _g = serial();
    let s = Server::start(&[]);
    let port = s.port.to_string();
    let dir = scratch_dir("dataset-csv");
    let csv = dir.join("docs.csv");
    let mut text = String::from("id,title\n");
    for i in 0..500 {
        let title = if i % 3 == 0 { format!("\"t {i}, \"\"q\"\"\"") } else if i % 7 == 0 { String::new() } else { "x".repeat(i) };
        text.push_str(&format!("{i},{title}\n"));
    }
    std::fs::write(&csv, text).expect("write csv");
    let csv = csv.to_string_lossy().into_owned();
    let v = json_run("dataset", &["-p", &port, "-c", "4", "-P", "8", "-n", "500", "--sequential", "--dataset", &csv, "-q",
        "HSET", "doc:__field:id__", "title", "__field:title__"]);
    assert_eq!(v["config"]["dataset"], csv.as_str());
    assert_eq!(v["tests"][0]["requests"], 500);
    assert_eq!(v["tests"][0]["errors"]["err"], 0);
    assert_eq!(s.cmd(&["DBSIZE"]), Resp::Int(500));
    for i in [0usize, 3, 7, 14, 299, 499] {
        let want = if i % 3 == 0 { format!("t {i}, \"q\"") } else if i % 7 == 0 { String::new() } else { "x".repeat(i) };
        assert_eq!(s.cmd(&["HGET", &format!("doc:{i}"), "title"]).text(), want, "doc:{i}");
    }
    let out = kvload(&["-p", &port, "-n", "10", "--dataset", &csv, "GET", "__field:nope__"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("columns: id, title"));
}
