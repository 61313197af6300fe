//! report: valkey-benchmark style text / CSV / quiet output and versioned JSON.

use std::fmt::Write as _;


use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::frontend::native::options::Options;
use crate::base::event_loop::IoUsed;
use crate::engine::stats::{self, Merged, Summary};

pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

pub struct TestResult {
    pub name: String,
    pub m: Merged,
    pub rps: f64,
    pub corrected: Summary,
    pub service: Summary,
    pub cores_used: f64,
    pub saturated: bool,
    /// --clients-start ...: the results of each step (`staircase`).
    pub steps: Option<Vec<crate::workload::staircase::StepResult>>,
}

impl TestResult {
    pub fn new(o: &Options, name: String, m: Merged) -> Self {
        let dur = m.duration_s.max(1e-9);
        let cores_used = (m.user_s + m.sys_s) / dur;
        TestResult {
            name,
            rps: m.requests as f64 / dur,
            corrected: stats::summary(&m.corrected),
            service: stats::summary(&m.service),
            saturated: cores_used >= 0.9 * o.threads as f64,
            cores_used,
            m,
            steps: None,
        }
    }
}

pub fn print(o: &Options, r: &TestResult, server_config: &[String]) {
    let s = &r.corrected;
    if o.csv {
        println!(
            "\"{}\",\"{:.2}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\"",
            r.name.replace('"', "\"\""),
            r.rps,
            s.mean,
            s.min,
            s.p50,
            s.p95,
            s.p99,
            s.max
        );
    } else if o.quiet {
        println!("{}: {:.2} requests per second, p50={:.3} msec", r.name, r.rps, s.p50);
    } else {
        print!("{}", text(o, r, server_config));
    }
    if r.m.errors.total() > 0 {
        let e = &r.m.errors;
        eprintln!(
            "WARNING: {}: {} error replies (err={} moved={} ask={} other={})",
            r.name,
            e.total(),
            e.err,
            e.moved,
            e.ask,
            e.other
        );
        if let Some(first) = &r.m.first_error {
            eprintln!("WARNING: {}: first error reply: {first}", r.name);
        }
    }
}

fn text(o: &Options, r: &TestResult, server_config: &[String]) -> String {
    let mut t = String::new();
    let s = &r.corrected;
    let _ = writeln!(t, "====== {} ======", r.name);
    let _ = writeln!(t, "  {} requests completed in {:.2} seconds", r.m.requests, r.m.duration_s);
    // A staircase reaches -c only at its last step (memtier's PR #491 label).
    let ramp = if o.ramp().is_some() { " at full ramp" } else { "" };
    let _ = writeln!(t, "  {} parallel clients{ramp}", o.clients);
    let _ = writeln!(t, "  {} bytes payload", o.data_size);
    let _ = writeln!(t, "  keep alive: {}", u8::from(o.keepalive));
    for line in server_config {
        let _ = writeln!(t, "  {line}");
    }
    let _ = writeln!(t, "  multi-thread: {}", if o.threads > 1 { "yes" } else { "no" });
    if o.threads > 1 {
        let _ = writeln!(t, "  threads: {}", o.threads);
    }
    if let Some(rps) = o.rps {
        let _ = writeln!(t, "  open loop: target {rps:.2} rps, late {}, unsent {}", r.m.late, r.m.unsent);
    }
    if r.m.errors.total() > 0 {
        let _ = writeln!(t, "  error replies: {}", r.m.errors.total());
    }
    let _ = writeln!(t, "\nLatency by percentile distribution:");
    percentile_lines(&mut t, &r.m.corrected);
    let _ = writeln!(t, "\nCumulative distribution of latencies:");
    cumulative_lines(&mut t, &r.m.corrected);
    let _ = writeln!(t, "\nSummary:");
    let _ = writeln!(t, "  throughput summary: {:.2} requests per second", r.rps);
    let _ = writeln!(t, "  latency summary (msec):");
    let _ = writeln!(t, "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "avg", "min", "p50", "p95", "p99", "max");
    let _ = writeln!(t, "    {:9.3} {:9.3} {:9.3} {:9.3} {:9.3} {:9.3}", s.mean, s.min, s.p50, s.p95, s.p99, s.max);
    if o.rps.is_some() {
        let v = &r.service;
        let _ = writeln!(t, "  service time summary (msec, from actual send):");
        let _ = writeln!(t, "    {:9.3} {:9.3} {:9.3} {:9.3} {:9.3} {:9.3}", v.mean, v.min, v.p50, v.p95, v.p99, v.max);
    }
    t
}

fn percentile_lines(t: &mut String, h: &Histogram<u64>) {
    let total = h.len();
    if total == 0 {
        return;
    }
    let mut cum = 0u64;
    let mut prev = u64::MAX;
    for v in h.iter_quantiles(1) {
        cum += v.count_since_last_iteration();
        if cum != prev || cum == total {
            let _ = writeln!(
                t,
                "{:3.3}% <= {:.3} milliseconds (cumulative count {})",
                v.quantile_iterated_to() * 100.0,
                h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
                cum
            );
        }
        prev = cum;
    }
}

fn cumulative_lines(t: &mut String, h: &Histogram<u64>) {
    let total = h.len();
    if total == 0 {
        return;
    }
    let mut v = 100u64;
    let mut prev = u64::MAX;
    loop {
        let cum = h.count_between(0, v);
        if cum != prev || cum == total {
            let pct = cum as f64 * 100.0 / total as f64;
            let _ = writeln!(t, "{pct:3.3}% <= {:.3} milliseconds (cumulative count {cum})", v as f64 / 1000.0);
        }
        if cum >= total {
            break;
        }
        prev = cum;
        v += if v >= 2000 { 1000 } else { 100 };
        if v > 2000 && !v.is_multiple_of(1000) {
            v = v.div_ceil(1000) * 1000;
        }
    }
}

// ---------- JSON ----------
//
// The report's layout is these structs; `schema/kvload-report.schema.json` describes
// the same layout and the tests check real output against it.
// Format versions: 1 = this layout (kvload 0.1).

/// JSON format name and version written in every report.
pub const FORMAT: &str = "kvload";
pub const VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Report<'a> {
    format: &'static str,
    version: u32,
    kvload_version: &'static str,
    config: Config<'a>,
    tests: Vec<TestJson<'a>>,
}

#[derive(Serialize)]
struct Config<'a> {
    host: &'a str,
    port: u16,
    socket: Option<&'a str>,
    clients: usize,
    threads: usize,
    pipeline: usize,
    /// None with --duration.
    requests: Option<u64>,
    duration_s: Option<f64>,
    warmup_s: f64,
    data_size: usize,
    keyspacelen: Option<u64>,
    sequential: bool,
    seed: Option<u64>,
    rps: Option<f64>,
    /// The open loop's send times: "uniform" (a grid) or "poisson"; null when closed.
    arrivals: Option<&'static str>,
    tls: bool,
    cluster: bool,
    resp3: bool,
    dbnum: u32,
    tests: Vec<String>,
    /// The event loop: "uring" or "epoll".
    io: &'static str,
    /// Why the loop is epoll although io_uring is the default (TLS, the kernel).
    io_note: Option<&'a str>,
    /// --dataset: the CSV whose rows filled `__field:NAME__` (null without it).
    dataset: Option<&'a str>,    /// --clients-start/--clients-step/--step-duration (absent without a ramp).
    #[serde(skip_serializing_if = "Option::is_none")]
    staircase: Option<crate::workload::staircase::Ramp>,
}

#[derive(Serialize)]
struct TestJson<'a> {
    name: &'a str,
    mode: &'static str,
    target_rps: Option<f64>,
    achieved_rps: f64,
    requests: u64,
    duration_s: f64,
    errors: ErrorsJson,
    late: u64,
    unsent: u64,
    latency_ms: Latencies<'a>,
    histograms: Histograms,
    intervals: Vec<IntervalJson>,
    /// Per second: successes, errors by kind, p99; outages with --reconnect-on-error.
    timeline: crate::engine::timeline::TimelineJson,
    cpu: Cpu,
    /// --clients-start ...: one entry per step (absent without a ramp).
    #[serde(skip_serializing_if = "Option::is_none")]
    staircase: Option<&'a [crate::workload::staircase::StepResult]>,
}

#[derive(Serialize)]
struct ErrorsJson {
    err: u64,
    moved: u64,
    ask: u64,
    timeout: u64,
    other: u64,
}

#[derive(Serialize)]
struct Latencies<'a> {
    corrected: &'a Summary,
    service: &'a Summary,
}

#[derive(Serialize)]
struct Histograms {
    unit: &'static str,
    significant_figures: u8,
    corrected: String,
    service: String,
}

#[derive(Serialize)]
struct IntervalJson {
    t_s: f64,
    requests: u64,
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
}

#[derive(Serialize)]
struct Cpu {
    user_s: f64,
    sys_s: f64,
    cores_used: f64,
    saturated: bool,
}

/// Base64 of the HdrHistogram V2 compressed (deflate) encoding.
pub fn encode_hist(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&buf),
        Err(_) => String::new(),
    }
}

fn config<'a>(o: &'a Options, io: &'a IoUsed) -> Config<'a> {
    let tests = match (o.command.is_empty(), &o.tests) {
        (false, _) => vec![o.command.join(" ")],
        (true, Some(t)) => t.clone(),
        (true, None) => crate::frontend::native::options::TEST_NAMES.iter().map(|s| s.to_string()).collect(),
    };
    Config {
        host: &o.host,
        port: o.port,
        socket: o.socket.as_deref(),
        clients: o.clients,
        threads: o.threads,
        pipeline: o.pipeline,
        requests: if o.duration.is_some() { None } else { Some(o.requests) },
        duration_s: o.duration,
        warmup_s: o.warmup,
        data_size: o.data_size,
        keyspacelen: o.keyspace,
        sequential: o.sequential,
        seed: o.seed,
        rps: o.rps,
        arrivals: o.rps.map(|_| if o.poisson { "poisson" } else { "uniform" }),
        tls: o.tls.enabled,
        cluster: o.cluster,
        resp3: o.resp3,
        dbnum: o.dbnum,
        tests,
        io: io.kind.name(),
        io_note: io.note.as_deref(),
        dataset: o.dataset.as_deref(),
        staircase: o.ramp(),
    }
}

fn test_json<'a>(o: &Options, r: &'a TestResult) -> TestJson<'a> {
    let m = &r.m;
    let e = &m.errors;
    TestJson {
        name: &r.name,
        mode: if o.rps.is_some() { "open" } else { "closed" },
        target_rps: o.rps,
        achieved_rps: r.rps,
        requests: m.requests,
        duration_s: m.duration_s,
        errors: ErrorsJson { err: e.err, moved: e.moved, ask: e.ask, timeout: e.timeout, other: e.other },
        late: m.late,
        unsent: m.unsent,
        latency_ms: Latencies { corrected: &r.corrected, service: &r.service },
        histograms: Histograms {
            unit: "us",
            significant_figures: o.precision,
            corrected: encode_hist(&m.corrected),
            service: encode_hist(&m.service),
        },
        intervals: m
            .intervals
            .iter()
            .map(|i| IntervalJson { t_s: i.t_s, requests: i.requests, rps: i.rps, p50_ms: i.p50_ms, p99_ms: i.p99_ms, errors: i.errors })
            .collect(),
        timeline: {
            let ok_p99: Vec<(u64, f64)> = m.intervals.iter().map(|i| (i.requests, i.p99_ms)).collect();
            crate::engine::timeline::to_json(&m.timeline, &ok_p99, crate::engine::timeline::unix_ms_of(m.start_ns))
        },
        cpu: Cpu { user_s: m.user_s, sys_s: m.sys_s, cores_used: r.cores_used, saturated: r.saturated },
        staircase: r.steps.as_deref(),
    }
}

/// The report as a value (serialised by `json`).
pub fn report<'a>(o: &'a Options, io: &'a IoUsed, results: &'a [TestResult]) -> Report<'a> {
    Report {
        format: FORMAT,
        version: VERSION,
        kvload_version: env!("CARGO_PKG_VERSION"),
        config: config(o, io),
        tests: results.iter().map(|r| test_json(o, r)).collect(),
    }
}

/// The whole --json file (pretty-printed; non-finite numbers become null).
pub fn json(o: &Options, io: &IoUsed, results: &[TestResult]) -> String {
    match serde_json::to_string_pretty(&report(o, io, results)) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Serialising plain structs of numbers and strings cannot fail.
        Err(e) => format!("{{\"error\": \"cannot serialise the report: {e}\"}}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_the_versioned_layout() {
        let o = Options { rps: Some(f64::NAN), ..Options::default() };
        let io = IoUsed { kind: crate::base::event_loop::IoKind::Uring, note: None };
        let v: serde_json::Value = serde_json::from_str(&json(&o, &io, &[])).expect("valid JSON");
        assert_eq!(v["config"]["io"], "uring");
        assert!(v["config"]["io_note"].is_null());
        assert_eq!(v["format"], "kvload");
        assert_eq!(v["version"], 1);
        assert!(v["config"]["rps"].is_null(), "non-finite numbers are null");
        assert_eq!(v["config"]["tests"].as_array().map(Vec::len), Some(crate::frontend::native::options::TEST_NAMES.len()));
    }

    #[test]
    fn hist_encoding_is_v2_compressed() {
        let mut h = stats::new_hist(3);
        h.saturating_record(1234);
        let b = base64::engine::general_purpose::STANDARD.decode(encode_hist(&h)).unwrap();
        // V2 compressed cookie 0x1c849314 (big endian).
        assert_eq!(&b[..4], &[0x1c, 0x84, 0x93, 0x14]);
    }
}
