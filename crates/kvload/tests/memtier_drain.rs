//! `kvload memtier --test-time` ends as memtier_benchmark does: no request is sent after
//! the deadline, the requests still in flight are waited for and counted, and rates are
//! over memtier's run time — the mean over clients of the first reply read at or after the
//! deadline, minus the start (client::finished / set_end_time and run_stats::merge in
//! memtier's source). Against a real valkey-server whose `DEBUG SLEEP` makes every reply
//! late: a kvload that stopped at the deadline would count only what came before it.

#[macro_use]
mod common;

use std::time::Instant;

use common::*;
use serde_json::Value;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn drains_and_counts_the_requests_in_flight_at_the_deadline() {
    let _g = serial();
    let s = Server::start(&["--enable-debug-command", "yes"]);
    let dir = scratch_dir("mt-drain");
    let json = dir.join("mt.json").to_string_lossy().into_owned();
    let p = s.port.to_string();
    // 2 connections × a window of 2 `DEBUG SLEEP 0.15`: the server runs one connection's
    // window after the other, so every reply comes 0.6 s after its round began; replies
    // at 0.6 s (refilled: 4 more) and 1.2 s, after the 1 s deadline.
    let t0 = Instant::now();
    let out = kvload(&["memtier", "-p", &p, "--hide-histogram", "--command", "DEBUG SLEEP 0.15", "-c", "1", "-t", "2", "--pipeline", "2", "--test-time", "1", "--json-out-file", &json]);
    let wall = t0.elapsed().as_secs_f64();
    assert_ok(&out);
    let v = read_json(std::path::Path::new(&json));
    let _ = std::fs::remove_dir_all(&dir);
    let totals = &v["ALL STATS"]["Totals"];
    let count = totals["Count"].as_u64().unwrap_or(0);
    let executed = calls(&s, "debug");
    assert_eq!(count, executed, "every request the server executed is answered and counted");
    assert!(executed >= 8, "two windows of 4 ran ({executed}): nothing was sent after 1 s, the second window was drained");
    assert!(wall >= 1.1, "kvload waited for the replies due at 1.2 s (ran {wall:.2} s)");
    let ms = v["ALL STATS"]["Runtime"]["Total duration"].as_u64().unwrap_or(0);
    assert!((1000..2000).contains(&ms), "memtier's run time ends at each client's first reply after the deadline: {ms} ms");
    let rate = count as f64 * 1000.0 / ms as f64;
    let ops = num(&totals["Ops/sec"]);
    assert!((ops / rate - 1.0).abs() < 0.02, "Ops/sec {ops} is Count over that run time ({rate:.2})");
}

on_both_loops!(drains_and_counts_the_requests_in_flight_at_the_deadline);
