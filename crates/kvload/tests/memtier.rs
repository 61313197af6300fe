//! The memtier front end (`kvload memtier ...`, argv[0] `memtier_benchmark`) against
//! real valkey-server processes: command mixes by commandstats, keys written,
//! memtier's JSON layout, refusals.

#[macro_use]
mod common;

use std::collections::BTreeSet;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn memtier(port: u16, args: &[&str]) -> Output {
    let p = port.to_string();
    let mut all = vec!["memtier", "-p", &p, "--hide-histogram"];
    all.extend_from_slice(args);
    kvload(&all)
}

/// Runs with --json-out-file and --kvload-json; returns (memtier JSON, kvload JSON).
fn memtier_json(port: u16, name: &str, args: &[&str]) -> (Value, Value) {
    let dir = scratch_dir(name);
    let (mt, kv) = (dir.join("mt.json"), dir.join("kv.json"));
    let (mts, kvs) = (mt.to_string_lossy().into_owned(), kv.to_string_lossy().into_owned());
    let mut all = vec!["--json-out-file", &mts, "--kvload-json", &kvs];
    all.extend_from_slice(args);
    let out = memtier(port, &all);
    assert_ok(&out);
    let v = (read_json(&mt), read_json(&kv));
    schema::assert_valid(&schema::load("memtier-report.schema.json"), &v.0);
    schema::assert_valid(&schema::load("kvload-report.schema.json"), &v.1);
    let _ = std::fs::remove_dir_all(&dir);
    v
}

fn keys(s: &Server, pattern: &str) -> BTreeSet<String> {
    match s.cmd(&["KEYS", pattern]) {
        Resp::Array(v) => v.iter().map(Resp::text).collect(),
        other => panic!("KEYS: {other:?}"),
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn ratio_1_10_gives_set_get_calls_in_that_ratio() {
    let _g = serial();
    let s = Server::start(&[]);
    let out = memtier(s.port, &["--ratio", "1:10", "-n", "2000", "-c", "5", "-t", "2", "--key-maximum", "1000"]);
    assert_ok(&out);
    let (sets, gets) = (calls(&s, "set") as f64, calls(&s, "get") as f64);
    assert_eq!(sets + gets, 20_000.0, "-n is per client: 2000 x 5 x 2");
    assert!((gets / sets / 10.0 - 1.0).abs() < 0.05, "SET {sets} GET {gets}");
    let text = stdout(&out);
    for col in ["Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency", "p50 Latency", "p99 Latency", "p99.9 Latency", "KB/sec"] {
        assert!(text.contains(col), "no column {col} in\n{text}");
    }
    assert!(text.lines().any(|l| l.starts_with("Totals")), "{text}");
    assert!(text.contains("ALL STATS"));
}

fn command_ratio_sequences_give_the_asked_mix() {
    let _g = serial();
    let s = Server::start(&[]);
    let (v, _) = memtier_json(s.port, "mt-mix", &[
        "--command", "HSET __key__ f __data__", "--command-ratio", "2", "--command-key-pattern", "R",
        "--command", "HGET __key__ f", "--command-key-pattern", "G",
        "-n", "300", "-c", "2", "-t", "2", "--key-maximum", "500", "--pipeline", "3",
    ]);
    assert_eq!((calls(&s, "hset"), calls(&s, "hget")), (800, 400), "each client: 200 HSET, 100 HGET");
    let all = &v["ALL STATS"];
    assert_eq!(all["Hsets"]["Count"], 800);
    assert_eq!(all["Hgets"]["Count"], 400);
    assert_eq!(all["Totals"]["Count"], 1200);
    assert!(f(&all["Hgets"]["Ops/sec"]) > 0.0);
}

fn allkeys_parallel_writes_each_key_once() {
    let _g = serial();
    let s = Server::start(&[]);
    let out = memtier(s.port, &["-n", "allkeys", "--ratio", "1:0", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "1000", "-c", "3", "-t", "2", "--pipeline", "7"]);
    assert_ok(&out);
    let want: BTreeSet<String> = (1..=1000).map(|i| format!("memtier-{i}")).collect();
    assert_eq!(s.cmd(&["DBSIZE"]), Resp::Int(1000));
    assert_eq!(keys(&s, "*"), want);
    assert_eq!(s.cmd(&["EXISTS", "memtier-1", "memtier-1000", "memtier-0", "memtier-1001"]), Resp::Int(2));
    assert!(stdout(&out).contains("setting requests to 167"));
}

fn key_patterns_on_the_server() {
    let _g = serial();
    let s = Server::start(&[]);
    // S: one client walks min.. in order.
    let out = memtier(s.port, &["--ratio", "1:0", "--key-pattern", "S:S", "--key-minimum", "10", "--key-maximum", "1000", "-n", "50", "-c", "1", "-t", "1", "--key-prefix", "s:"]);
    assert_ok(&out);
    assert_eq!(keys(&s, "s:*"), (10..60).map(|i| format!("s:{i}")).collect());
    // S is per client: every client writes the same keys.
    let out = memtier(s.port, &["--ratio", "1:0", "--key-pattern", "S:S", "-n", "20", "-c", "4", "-t", "2", "--key-prefix", "t:"]);
    assert_ok(&out);
    assert_eq!(keys(&s, "t:*"), (0..20).map(|i| format!("t:{i}")).collect());
    // R: uniform over the range, nothing outside it.
    let out = memtier(s.port, &["--ratio", "1:0", "--key-minimum", "100", "--key-maximum", "199", "-n", "500", "-c", "2", "-t", "2", "--distinct-client-seed", "--key-prefix", "r:"]);
    assert_ok(&out);
    let r = keys(&s, "r:*");
    assert!(r.len() > 95, "2000 uniform draws over 100 keys hit almost all: {}", r.len());
    assert!(r.iter().all(|k| k[2..].parse::<u64>().is_ok_and(|n| (100..200).contains(&n))));
    // Z: skewed towards the low keys.
    let out = memtier(s.port, &["--command", "INCR __key__", "--command-key-pattern", "Z", "--key-zipf-exp", "1.2", "--key-maximum", "100000", "-n", "2000", "-c", "1", "-t", "1", "--key-prefix", "z:"]);
    assert_ok(&out);
    let hot = match s.cmd(&["GET", "z:1"]) {
        Resp::Bulk(Some(b)) => String::from_utf8_lossy(&b).parse::<u64>().unwrap_or(0),
        other => panic!("GET z:1: {other:?}"),
    };
    assert!(hot > 200, "key 1 should take a large share of zipf draws: {hot}");
}

fn json_out_file_has_memtiers_layout() {
    let _g = serial();
    let s = Server::start(&[]);
    let (v, kv) = memtier_json(s.port, "mt-json", &["-n", "500", "-c", "2", "-t", "2", "--print-percentiles", "50,99,99.9,99.99", "--key-maximum", "100"]);
    let t = &v["ALL STATS"]["Totals"];
    assert!(f(&t["Ops/sec"]) > 0.0);
    for k in ["Latency", "Average Latency", "Min Latency", "Max Latency", "KB/sec", "Hits/sec", "Misses/sec"] {
        assert!(t[k].is_number(), "Totals.{k}: {t}");
    }
    for p in ["p50.00", "p99.00", "p99.90", "p99.99"] {
        assert!(f(&t["Percentile Latencies"][p]) > 0.0, "{p}");
    }
    assert!(f(&v["ALL STATS"]["Gets"]["Ops/sec"]) > 0.0);
    let rt = &v["ALL STATS"]["Runtime"];
    assert!(rt["Start time"].as_u64().unwrap_or(0) > 1_600_000_000_000);
    assert!(rt["Total duration"].is_u64());
    assert_eq!(v["run information"]["Requests per client"], 500);
    // kvload's own report of the same run, with histograms.
    let test = &kv["tests"][0];
    assert_eq!(kv["format"], "kvload");
    assert_eq!(test["requests"], 2000);
    assert!(test["histograms"]["corrected"].as_str().is_some_and(|h| !h.is_empty()));
}

fn test_time_and_run_count() {
    let _g = serial();
    let s = Server::start(&[]);
    let t0 = Instant::now();
    let (v, kv) = memtier_json(s.port, "mt-time", &["--test-time", "1", "-c", "2", "-t", "1", "-x", "2", "--key-maximum", "100"]);
    let wall = t0.elapsed().as_secs_f64();
    assert!((2.0..5.0).contains(&wall), "two 1 s runs took {wall} s");
    for name in ["BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (2 runs)"] {
        assert!(f(&v[name]["Totals"]["Ops/sec"]) > 0.0, "{name}");
    }
    let d = v["BEST RUN RESULTS"]["Runtime"]["Total duration"].as_u64().unwrap_or(0);
    assert!((900..=1500).contains(&d), "duration {d} ms");
    assert_eq!(kv["tests"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["run information"]["Seconds"], 1);
}

fn unsupported_and_unknown_options_exit_2_by_name() {
    for (args, name) in [
        (vec!["memtier", "--no-such-flag"], "--no-such-flag"),
        (vec!["memtier", "--rate-limiting", "0"], "rate-limiting must be greater than zero"),
        (vec!["memtier", "--wait-ratio", "1:1"], "--wait-ratio"),
        (vec!["memtier", "-P", "memcache_binary"], "memcache_binary"),
        (vec!["memtier", "--command", "GET __key__", "--ratio", "1:1"], "--command-ratio"),
    ] {
        let out = kvload(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && err.lines().count() == 1, "{args:?}: {err}");
    }
}

fn memtier_benchmark_argv0_alias() {
    let _g = serial();
    let s = Server::start(&[]);
    let dir = scratch_dir("mt-alias");
    let link = dir.join("memtier_benchmark");
    std::os::unix::fs::symlink(kvload_bin(), &link).expect("symlink");
    let version = Command::new(&link).arg("--version").output().expect("run link");
    assert!(stdout(&version).starts_with("memtier_benchmark"));
    let out = Command::new(&link)
        .args(current_io().map(|io| format!("--io={io}")))
        .args(["-s", "127.0.0.1", "-p", &s.port.to_string(), "-n", "10", "-c", "1", "-t", "1", "--ratio", "1:0", "--hide-histogram"])
        .output()
        .expect("run link");
    assert_ok(&out);
    assert_eq!(calls(&s, "set"), 10);
    let bad = Command::new(&link).arg("--bogus").output().expect("run link");
    assert_eq!(bad.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

fn scan_incremental_iteration_follows_cursors() {
    let _g = serial();
    let s = Server::start(&[]);
    assert_ok(&memtier(s.port, &["-n", "allkeys", "--ratio", "1:0", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "200", "-c", "1", "-t", "1", "--pipeline", "20"]));
    let (v, _) = memtier_json(s.port, "mt-scan", &["--command", "SCAN 0 COUNT 10", "--scan-incremental-iteration", "-n", "100", "-c", "1", "-t", "1"]);
    let all = &v["ALL STATS"];
    let (first, cont) = (all["Scan 0s"]["Count"].as_u64().unwrap_or(0), all["Scan <cursor>s"]["Count"].as_u64().unwrap_or(0));
    assert_eq!(first + cont, 100);
    assert!(first >= 2 && cont > first * 10, "200 keys, COUNT 10: ~20 SCANs per pass ({first} first, {cont} continuations)");
    assert_eq!(calls(&s, "scan"), 100);
    // ZSCAN (as HSCAN and SSCAN): the cursor after the key; a walk over 1,000 members
    let members: Vec<String> = (0..1000).flat_map(|i| [i.to_string(), format!("m{i}")]).collect();
    let mut zadd = vec!["ZADD", "z"];
    zadd.extend(members.iter().map(String::as_str));
    assert_eq!(s.cmd(&zadd), Resp::Int(1000));
    let (v, _) = memtier_json(s.port, "mt-zscan", &["--command", "ZSCAN z 0 COUNT 10", "--scan-incremental-iteration", "-n", "300", "-c", "1", "-t", "1"]);
    let all = &v["ALL STATS"];
    let (first, cont) = (all["Zscan 0s"]["Count"].as_u64().unwrap_or(0), all["Zscan <cursor>s"]["Count"].as_u64().unwrap_or(0));
    assert_eq!((first + cont, calls(&s, "zscan")), (300, 300));
    assert!(first >= 2 && cont > first * 50, "1,000 members, COUNT 10: ~100 ZSCANs per walk ({first} first, {cont} continuations)");
}

fn values_protocols_and_misses() {
    let _g = serial();
    let s = Server::start(&[]);
    // --data-size-range with --random-data: sizes in the range, bytes not memtier's 'x' filler.
    assert_ok(&memtier(s.port, &["--ratio", "1:0", "--key-pattern", "S:S", "-n", "200", "-c", "1", "-t", "1", "--data-size-range", "10-20", "-R", "--key-prefix", "v:"]));
    let mut sizes = BTreeSet::new();
    for i in 0..200 {
        let k = format!("v:{i}");
        match s.cmd(&["STRLEN", &k]) {
            Resp::Int(n) => sizes.insert(n),
            other => panic!("STRLEN {k}: {other:?}"),
        };
        assert_ne!(s.cmd(&["GET", &k]).text(), "x".repeat(s.cmd(&["STRLEN", &k]).text().parse().unwrap_or(0)));
    }
    assert!(sizes.iter().all(|n| (10..=20).contains(n)) && sizes.len() > 5, "{sizes:?}");
    assert_ok(&memtier(s.port, &["--ratio", "1:0", "-n", "5", "-c", "1", "-t", "1", "-d", "7", "--key-prefix", "d:", "--key-pattern", "S:S"]));
    assert_eq!(s.cmd(&["GET", "d:0"]).text(), "xxxxxxx");
    // GETs of absent keys are misses, with RESP3 nulls too.
    for proto in ["redis", "resp2", "resp3"] {
        let (v, _) = memtier_json(s.port, "mt-miss", &["-P", proto, "--ratio", "0:1", "-n", "100", "-c", "1", "-t", "2", "--key-prefix", "absent:"]);
        let t = &v["ALL STATS"]["Totals"];
        assert!(f(&t["Misses/sec"]) > 0.0 && f(&t["Hits/sec"]) == 0.0, "{proto}: {t}");
    }
    assert_eq!(calls(&s, "hello"), 6, "HELLO 2 / HELLO 3 on the 2 connections and the setup probe of each run");
    // Hits: GET d:0..d:4 with S:S.
    let (v, _) = memtier_json(s.port, "mt-hit", &["--ratio", "0:1", "-n", "5", "-c", "1", "-t", "1", "--key-prefix", "d:", "--key-pattern", "S:S"]);
    assert_eq!(f(&v["ALL STATS"]["Gets"]["Misses/sec"]), 0.0);
    assert!(f(&v["ALL STATS"]["Gets"]["Hits/sec"]) > 0.0);
}

/// Once, not on both loops: TLS runs on epoll whatever `--io` asks (integration.rs'
/// `tls_with_io_uring_asked_runs_on_epoll_and_says_so` covers `--io=uring --tls`).
#[test]
fn tls_mode() {
    let _g = serial();
    let dir = scratch_dir("mt-tls");
    write_certs(&dir);
    let (_s, port) = tls_server(&dir, "yes");
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (ca, cert, key) = (p("ca.pem"), p("client.pem"), p("client.key"));
    let tls = ["--tls", "--sni", "localhost", "--cacert", &ca, "--cert", &cert, "--key", &key, "-n", "200", "-c", "2", "-t", "1"];
    let (_, kv) = memtier_json(port, "mt-tls-run", &tls);
    assert_eq!(kv["tests"][0]["requests"], 400);
    assert_eq!((&kv["config"]["tls"], &kv["config"]["io"]), (&Value::Bool(true), &Value::from("epoll")));
    let bad = memtier(port, &["--tls", "--sni", "localhost", "-n", "10"]);
    assert_eq!(bad.status.code(), Some(1), "no CA: the handshake must fail");
    let _ = std::fs::remove_dir_all(&dir);
}

fn cluster_mode() {
    let _g = serial();
    let dir = scratch_dir("mt-cluster");
    let nodes = start_cluster(&dir);
    let (v, kv) = memtier_json(nodes[0].port, "mt-cluster-run", &["--cluster-mode", "--ratio", "1:1", "-n", "500", "-c", "3", "-t", "2", "--key-maximum", "100000"]);
    assert_eq!(kv["tests"][0]["errors"]["moved"], 0, "keys are drawn on the connection's node");
    assert_eq!(kv["tests"][0]["requests"], 3000);
    assert!(v["ALL STATS"]["Totals"]["MOVED/sec"].is_number());
    for n in &nodes {
        assert!(calls(n, "set") > 200, "node {} got {} SETs", n.port, calls(n, "set"));
    }
    cluster_parallel_and_sequential(&nodes);
    drop(nodes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// memtier's cluster client keeps each client's key range and order and routes every key to
/// its slot's primary: `-n allkeys` P:P writes each key of the range once, spread over the
/// primaries as the slots say, without a redirect; S walks the range in order per client.
fn cluster_parallel_and_sequential(nodes: &[Server]) {
    let sets = || nodes.iter().map(|n| calls(n, "set")).sum::<u64>();
    let before = sets();
    let (_, kv) = memtier_json(nodes[0].port, "mt-cluster-pp", &["--cluster-mode", "-n", "allkeys", "--ratio", "1:0", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "3000", "-c", "5", "-t", "2", "--pipeline", "30", "--key-prefix", "p:"]);
    assert_eq!(kv["tests"][0]["errors"]["moved"], 0, "every key sent to its slot's primary");
    let mut all = BTreeSet::new();
    for (i, n) in nodes.iter().enumerate() {
        let mine = keys(n, "p:*");
        assert!(mine.iter().all(|k| owner_of(k) == i), "node {i} holds a key of another slot");
        all.extend(mine);
    }
    assert_eq!(all, (1..=3000).map(|i| format!("p:{i}")).collect::<BTreeSet<_>>());
    // -n allkeys: 2999 / 10 clients + 1 = 300 requests each, its slice of 300 keys once
    assert_eq!(sets() - before, 3000);
    assert!(nodes.iter().all(|n| n.cmd(&["DBSIZE"]) != Resp::Int(0)));
    let out = memtier(nodes[0].port, &["--cluster-mode", "-n", "40", "--ratio", "1:1", "--key-pattern", "S:S", "--key-minimum", "1", "-c", "3", "-t", "1", "--key-prefix", "s:"]);
    assert_ok(&out);
    let written: BTreeSet<String> = nodes.iter().flat_map(|n| keys(n, "s:*")).collect();
    assert_eq!(written, (1..=20).map(|i| format!("s:{i}")).collect(), "SET and GET walk 1.. in order, each its own cursor");
}

/// --rate-limiting paces each connection in memtier's ticks (50 a second for 50 RPS: one
/// request each); --thread-conn-start-*-jitter-micros pauses between a thread's clients.
fn rate_limiting_and_connect_jitter() {
    let _g = serial();
    let s = Server::start(&[]);
    let t = Instant::now();
    assert_ok(&memtier(s.port, &["-c", "3", "-t", "1", "-n", "26", "--rate-limiting", "50", "--ratio", "1:0"]));
    let paced = t.elapsed();
    assert_eq!(calls(&s, "set"), 78);
    // the first tick at the start, 25 more 20 ms apart
    assert!(paced >= Duration::from_millis(480) && paced < Duration::from_millis(1500), "{paced:?}");
    let t = Instant::now();
    assert_ok(&memtier(s.port, &["-c", "6", "-t", "1", "-n", "1", "--thread-conn-start-min-jitter-micros", "40000", "--thread-conn-start-max-jitter-micros", "40000"]));
    assert!(t.elapsed() >= Duration::from_millis(200), "5 pauses of 40 ms: {:?}", t.elapsed());
}

/// --reconnect-interval N: each client reconnects (AUTH, HELLO again) after every N
/// answered requests but the last, so -n 10 and N = 3 make 3 reconnects per client.
fn reconnect_interval_replaces_the_connection() {
    let _g = serial();
    let s = Server::start(&[]);
    let accepted = || info_num(s.port, "stats", "total_connections_received");
    let mut opened = Vec::new();
    for extra in [&[][..], &["--reconnect-interval", "3"]] {
        let before = accepted();
        let mut args = vec!["-c", "2", "-t", "2", "-n", "10", "--ratio", "0:1", "--pipeline", "4"];
        args.extend_from_slice(extra);
        assert_ok(&memtier(s.port, &args));
        opened.push(accepted() - before);
    }
    assert_eq!(opened[1] - opened[0], 4 * 3, "{opened:?}");
    assert_eq!(calls(&s, "get"), 80);
}

fn json_out_file_with_distributions_matches_schema() {
    let _g = serial();
    let s = Server::start(&[]);
    let dir = scratch_dir("mt-schema");
    let path = dir.join("mt.json").to_string_lossy().into_owned();
    let p = s.port.to_string();
    let out = kvload(&["memtier", "-p", &p, "-n", "200", "-c", "2", "-t", "1", "-x", "2", "--json-out-file", &path]);
    assert_ok(&out);
    let v = read_json(std::path::Path::new(&path));
    let _ = std::fs::remove_dir_all(&dir);
    let sch = schema::load("memtier-report.schema.json");
    schema::assert_valid(&sch, &v);
    assert!(v["BEST RUN RESULTS"]["SET"].is_array(), "distribution arrays present");
    let mut bad = v.clone();
    bad["BEST RUN RESULTS"]["SET"] = serde_json::json!(3);
    bad["WORST RUN RESULTS"]["Totals"]["Percentile Latencies"]["p50.00"] = serde_json::json!("x");
    assert_eq!(schema::violations(&sch, &bad).len(), 2);
}

on_both_loops!(
    ratio_1_10_gives_set_get_calls_in_that_ratio,
    command_ratio_sequences_give_the_asked_mix,
    allkeys_parallel_writes_each_key_once,
    key_patterns_on_the_server,
    json_out_file_has_memtiers_layout,
    test_time_and_run_count,
    unsupported_and_unknown_options_exit_2_by_name,
    memtier_benchmark_argv0_alias,
    scan_incremental_iteration_follows_cursors,
    values_protocols_and_misses,
    cluster_mode,
    rate_limiting_and_connect_jitter,
    reconnect_interval_replaces_the_connection,
    json_out_file_with_distributions_matches_schema,
);
