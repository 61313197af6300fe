//! trace::info: `kvload trace-info TRACE` prints a trace's summary as JSON (the header, command
//! counts, connections, span, commands per second from the first command). kvperf and the
//! tests read it; `kvperf trace stats` adds the key and value analyses.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde::Serialize;

use super::format::{FLAG_ANONYMIZED, FLAG_MONITOR};
use super::Trace;

#[derive(Serialize)]
pub struct Info {
    format: &'static str,
    version: u16,
    anonymized: bool,
    monitor: bool,
    start_unix_us: u64,
    bytes: usize,
    commands: usize,
    connections: usize,
    span_s: f64,
    command_counts: BTreeMap<String, u64>,
    /// Commands in each second after the first command (the last second may be partial).
    per_second: Vec<u64>,
    /// Why `kvload replay` refuses the trace (pub/sub, MONITOR, …), or null.
    unreplayable: Option<String>,
}

pub fn info(t: &Trace) -> Info {
    let first = t.records.iter().map(|r| r.t_us).min().unwrap_or(0);
    let last = t.records.iter().map(|r| r.t_us).max().unwrap_or(0);
    let mut counts = BTreeMap::new();
    let mut per_second = vec![0u64; ((last - first) / 1_000_000) as usize + usize::from(!t.records.is_empty())];
    let mut conns = BTreeSet::new();
    for r in &t.records {
        *counts.entry(String::from_utf8_lossy(&r.args[0]).to_ascii_uppercase()).or_insert(0) += 1;
        per_second[((r.t_us - first) / 1_000_000) as usize] += 1;
        conns.insert(r.conn);
    }
    Info {
        format: "kvload-trace",
        version: t.header.version,
        anonymized: t.header.flags & FLAG_ANONYMIZED != 0,
        monitor: t.header.flags & FLAG_MONITOR != 0,
        start_unix_us: t.header.start_unix_us,
        bytes: t.bytes,
        commands: t.records.len(),
        connections: conns.len(),
        span_s: (last - first) as f64 / 1e6,
        command_counts: counts,
        per_second,
        unreplayable: super::replay::unreplayable(&t.records),
    }
}

pub fn main(argv: &[String]) -> i32 {
    let [path] = argv else {
        if argv.first().map(String::as_str) == Some("--help") {
            println!("Usage: kvload trace-info TRACE   (a JSON summary of a trace or MONITOR capture)");
            return 0;
        }
        return super::bad_input("trace-info", "usage: kvload trace-info TRACE");
    };
    match super::load(path) {
        Ok(t) => {
            println!("{}", serde_json::to_string_pretty(&info(&t)).unwrap_or_default());
            0
        }
        Err(e) => super::bad_input("trace-info", &e),
    }
}
