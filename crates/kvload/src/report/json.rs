//! json: kvload's versioned JSON report. Its layout is these structs;
//! `schema/kvload-report.schema.json` describes the same layout and the tests check real
//! output against it. Format versions: 1 = this layout (kvload 0.1).

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::base::event_loop::IoUsed;
use crate::engine::stats::Summary;
use crate::engine::timeline::{self, TimelineJson};
use crate::report::result::{RunInfo, TestResult};
use crate::workload::staircase::{Ramp, StepResult};

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
    tests: &'a [String],
    /// The event loop: "uring" or "epoll".
    io: &'static str,
    /// Why the loop is epoll although io_uring is the default (TLS, the kernel).
    io_note: Option<&'a str>,
    /// --dataset: the CSV whose rows filled `__field:NAME__` (null without it).
    dataset: Option<&'a str>,    /// --clients-start/--clients-step/--step-duration (absent without a ramp).
    #[serde(skip_serializing_if = "Option::is_none")]
    staircase: Option<Ramp>,
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
    /// Of `late`, those kvload held back: sent > 1 ms after both the intended time and the
    /// read of the reply that freed the connection.
    late_own: u64,
    unsent: u64,
    latency_ms: Latencies<'a>,
    histograms: Histograms,
    intervals: Vec<IntervalJson>,
    /// Per second: successes, errors by kind, p99; outages with --reconnect-on-error.
    timeline: TimelineJson,
    cpu: Cpu,
    /// --clients-start ...: one entry per step (absent without a ramp).
    #[serde(skip_serializing_if = "Option::is_none")]
    staircase: Option<&'a [StepResult]>,
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

fn config<'a>(o: &'a RunInfo, io: &'a IoUsed) -> Config<'a> {
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
        tls: o.tls,
        cluster: o.cluster,
        resp3: o.resp3,
        dbnum: o.dbnum,
        tests: &o.tests,
        io: io.kind.name(),
        io_note: io.note.as_deref(),
        dataset: o.dataset.as_deref(),
        staircase: o.ramp,
    }
}

fn test_json<'a>(o: &RunInfo, r: &'a TestResult) -> TestJson<'a> {
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
        late_own: m.late_own,
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
            timeline::to_json(&m.timeline, &ok_p99, timeline::unix_ms_of(m.start_ns))
        },
        cpu: Cpu { user_s: m.user_s, sys_s: m.sys_s, cores_used: r.cores_used, saturated: r.saturated },
        staircase: r.steps.as_deref(),
    }
}

/// The report as a value (serialised by `json`).
pub fn report<'a>(o: &'a RunInfo, io: &'a IoUsed, results: &'a [TestResult]) -> Report<'a> {
    Report {
        format: FORMAT,
        version: VERSION,
        kvload_version: env!("CARGO_PKG_VERSION"),
        config: config(o, io),
        tests: results.iter().map(|r| test_json(o, r)).collect(),
    }
}

/// The whole --json file (pretty-printed; non-finite numbers become null).
pub fn json(o: &RunInfo, io: &IoUsed, results: &[TestResult]) -> String {
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
        let tests = vec!["ping_inline".to_string(), "set".into()];
        let o = RunInfo { rps: Some(f64::NAN), tests, ..RunInfo::default() };
        let io = IoUsed { kind: crate::base::event_loop::IoKind::Uring, note: None };
        let v: serde_json::Value = serde_json::from_str(&json(&o, &io, &[])).expect("valid JSON");
        assert_eq!(v["config"]["io"], "uring");
        assert!(v["config"]["io_note"].is_null());
        assert_eq!(v["format"], "kvload");
        assert_eq!(v["version"], 1);
        assert!(v["config"]["rps"].is_null(), "non-finite numbers are null");
        assert_eq!(v["config"]["tests"], serde_json::json!(["ping_inline", "set"]));
    }

    #[test]
    fn hist_encoding_is_v2_compressed() {
        let mut h = crate::engine::stats::new_hist(3);
        h.saturating_record(1234);
        let b = base64::engine::general_purpose::STANDARD.decode(encode_hist(&h)).unwrap();
        // V2 compressed cookie 0x1c849314 (big endian).
        assert_eq!(&b[..4], &[0x1c, 0x84, 0x93, 0x14]);
    }
}
