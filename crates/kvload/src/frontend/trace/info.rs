//! trace::info: `kvload trace-info TRACE` prints a trace's summary as JSON (the header, command
//! counts, connections, span, commands per second from the first command). kvperf and the
//! tests read it; `kvperf trace stats` adds the key and value analyses. A trace recorded with
//! `--replies` adds the reply-size histogram and the recorded latency percentiles.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde::Serialize;

use crate::base::exit;

use super::file::{self, Trace};
use super::format::{Gap, Record, FLAG_ANONYMIZED, FLAG_KEEP_SLOTS, FLAG_MONITOR, FLAG_REPLIES};
use super::replies::unreplayable;

#[derive(Serialize)]
pub struct Info {
    format: &'static str,
    version: u16,
    anonymized: bool,
    monitor: bool,
    /// Anonymized with `--keep-slots`.
    keep_slots: bool,
    /// Recorded with `--replies` (a MONITOR capture never is).
    replies: bool,
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
    /// Recorded replies (null without them).
    recorded_replies: Option<Replies>,
    /// Records `kvload record` dropped from the trace (its writer was behind): null when the
    /// trace is complete.
    dropped: Option<Dropped>,
}

/// A trace's gaps: the records dropped in all, and each gap (connection, time, counts).
#[derive(Serialize, Debug, PartialEq)]
pub struct Dropped {
    records: u64,
    bytes: u64,
    connections: usize,
    gaps: Vec<Gap>,
}

pub fn dropped(gaps: &[Gap]) -> Option<Dropped> {
    let connections = gaps.iter().map(|g| g.conn).collect::<BTreeSet<_>>().len();
    (!gaps.is_empty()).then(|| Dropped {
        // Saturating: the counts are read from the file (a corrupted one may claim anything).
        records: gaps.iter().fold(0u64, |n, g| n.saturating_add(g.records)),
        bytes: gaps.iter().fold(0u64, |n, g| n.saturating_add(g.bytes)),
        connections,
        gaps: gaps.to_vec(),
    })
}

/// What `record --replies` saw: reply sizes and the latency at the proxy.
#[derive(Serialize, Debug, PartialEq)]
pub struct Replies {
    /// Commands with a recorded reply.
    count: usize,
    /// Reply size in bytes, power-of-two buckets: "≤N" → replies.
    size_histogram: BTreeMap<String, u64>,
    latency_p50_us: u64,
    latency_p99_us: u64,
    latency_max_us: u64,
}

/// The power-of-two bucket a size falls in (1, 2, 4, …).
fn bucket(size: u64) -> u64 {
    size.max(1).next_power_of_two()
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

pub fn replies(records: &[Record]) -> Option<Replies> {
    let mut lat: Vec<u64> = Vec::new();
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for (size, us) in records.iter().filter_map(|r| r.reply) {
        lat.push(us);
        *sizes.entry(bucket(size)).or_insert(0) += 1;
    }
    if lat.is_empty() {
        return None;
    }
    lat.sort_unstable();
    Some(Replies {
        count: lat.len(),
        size_histogram: sizes.into_iter().map(|(b, n)| (format!("≤{b}"), n)).collect(),
        latency_p50_us: percentile(&lat, 50.0),
        latency_p99_us: percentile(&lat, 99.0),
        latency_max_us: lat[lat.len() - 1],
    })
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
        keep_slots: t.header.flags & FLAG_KEEP_SLOTS != 0,
        replies: t.header.flags & FLAG_REPLIES != 0,
        start_unix_us: t.header.start_unix_us,
        bytes: t.bytes,
        commands: t.records.len(),
        connections: conns.len(),
        span_s: (last - first) as f64 / 1e6,
        command_counts: counts,
        per_second,
        unreplayable: unreplayable(&t.records),
        recorded_replies: replies(&t.records),
        dropped: dropped(&t.gaps),
    }
}

pub fn main(argv: &[String]) -> i32 {
    let [path] = argv else {
        if argv.first().map(String::as_str) == Some("--help") {
            println!("Usage: kvload trace-info TRACE   (a JSON summary of a trace or MONITOR capture)");
            return 0;
        }
        return exit::bad_input("trace-info", "usage: kvload trace-info TRACE");
    };
    match file::load(path) {
        Ok(t) => {
            println!("{}", serde_json::to_string_pretty(&info(&t)).unwrap_or_default());
            0
        }
        Err(e) => exit::bad_input("trace-info", &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_histogram_and_latency_percentiles() {
        let rec = |reply| Record { conn: 0, t_us: 0, args: vec![b"GET".to_vec()], reply };
        assert_eq!(replies(&[rec(None)]), None, "no replies recorded");
        let mut rs: Vec<Record> = (1..=100).map(|i| rec(Some((if i <= 90 { 5 } else { 40 }, i)))).collect();
        rs.push(rec(None));
        let r = replies(&rs).unwrap();
        assert_eq!(r.count, 100);
        assert_eq!(r.size_histogram, BTreeMap::from([("≤8".to_string(), 90), ("≤64".to_string(), 10)]));
        assert_eq!((r.latency_p50_us, r.latency_p99_us, r.latency_max_us), (50, 99, 100));
    }
}
