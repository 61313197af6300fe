//! report: valkey-benchmark style text / CSV / quiet output and versioned JSON.

use std::fmt::Write as _;

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::cli::Options;
use crate::stats::{self, Merged, Summary};

pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

pub struct TestResult {
    pub name: String,
    pub m: Merged,
    pub rps: f64,
    pub corrected: Summary,
    pub service: Summary,
    pub cores_used: f64,
    pub saturated: bool,
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
    }
}

fn text(o: &Options, r: &TestResult, server_config: &[String]) -> String {
    let mut t = String::new();
    let s = &r.corrected;
    let _ = writeln!(t, "====== {} ======", r.name);
    let _ = writeln!(t, "  {} requests completed in {:.2} seconds", r.m.requests, r.m.duration_s);
    let _ = writeln!(t, "  {} parallel clients", o.clients);
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

fn jstr(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn jnum(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

fn jopt_num(v: Option<f64>) -> String {
    v.map_or("null".into(), jnum)
}

fn jopt_str(v: &Option<String>) -> String {
    v.as_ref().map_or("null".into(), |s| jstr(s))
}

fn summary_json(s: &Summary) -> String {
    format!(
        "{{\"min\": {}, \"mean\": {}, \"p50\": {}, \"p90\": {}, \"p95\": {}, \"p99\": {}, \"p99_9\": {}, \"p99_99\": {}, \"max\": {}}}",
        jnum(s.min), jnum(s.mean), jnum(s.p50), jnum(s.p90), jnum(s.p95), jnum(s.p99), jnum(s.p99_9), jnum(s.p99_99), jnum(s.max)
    )
}

/// Base64 of the HdrHistogram V2 compressed (deflate) encoding.
pub fn encode_hist(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&buf),
        Err(_) => String::new(),
    }
}

fn config_json(o: &Options) -> String {
    let tests = match (&o.command.is_empty(), &o.tests) {
        (false, _) => format!("[{}]", jstr(&o.command.join(" "))),
        (true, Some(t)) => format!("[{}]", t.iter().map(|s| jstr(s)).collect::<Vec<_>>().join(", ")),
        (true, None) => format!("[{}]", crate::cli::TEST_NAMES.iter().map(|s| jstr(s)).collect::<Vec<_>>().join(", ")),
    };
    format!(
        "{{\"host\": {}, \"port\": {}, \"socket\": {}, \"clients\": {}, \"threads\": {}, \"pipeline\": {}, \"requests\": {}, \"duration_s\": {}, \"warmup_s\": {}, \"data_size\": {}, \"keyspacelen\": {}, \"sequential\": {}, \"seed\": {}, \"rps\": {}, \"tls\": {}, \"cluster\": {}, \"resp3\": {}, \"dbnum\": {}, \"tests\": {}}}",
        jstr(&o.host), o.port, jopt_str(&o.socket), o.clients, o.threads, o.pipeline,
        if o.duration.is_some() { "null".to_string() } else { o.requests.to_string() },
        jopt_num(o.duration), jnum(o.warmup), o.data_size,
        o.keyspace.map_or("null".into(), |k| k.to_string()), o.sequential,
        o.seed.map_or("null".into(), |s| s.to_string()), jopt_num(o.rps),
        o.tls.enabled, o.cluster, o.resp3, o.dbnum, tests
    )
}

fn test_json(o: &Options, r: &TestResult, sigfig: u8) -> String {
    let m = &r.m;
    let e = &m.errors;
    let intervals: Vec<String> = m
        .intervals
        .iter()
        .map(|i| {
            format!(
                "{{\"t_s\": {}, \"requests\": {}, \"rps\": {}, \"p50_ms\": {}, \"p99_ms\": {}, \"errors\": {}}}",
                jnum(i.t_s), i.requests, jnum(i.rps), jnum(i.p50_ms), jnum(i.p99_ms), i.errors
            )
        })
        .collect();
    format!(
        concat!(
            "{{\"name\": {}, \"mode\": {}, \"target_rps\": {}, \"achieved_rps\": {}, \"requests\": {}, \"duration_s\": {}, ",
            "\"errors\": {{\"err\": {}, \"moved\": {}, \"ask\": {}, \"timeout\": {}, \"other\": {}}}, ",
            "\"late\": {}, \"unsent\": {}, ",
            "\"latency_ms\": {{\"corrected\": {}, \"service\": {}}}, ",
            "\"histograms\": {{\"unit\": \"us\", \"significant_figures\": {}, \"corrected\": {}, \"service\": {}}}, ",
            "\"intervals\": [{}], ",
            "\"cpu\": {{\"user_s\": {}, \"sys_s\": {}, \"cores_used\": {}, \"saturated\": {}}}}}"
        ),
        jstr(&r.name),
        jstr(if o.rps.is_some() { "open" } else { "closed" }),
        jopt_num(o.rps), jnum(r.rps), m.requests, jnum(m.duration_s),
        e.err, e.moved, e.ask, e.timeout, e.other,
        m.late, m.unsent,
        summary_json(&r.corrected), summary_json(&r.service),
        sigfig, jstr(&encode_hist(&m.corrected)), jstr(&encode_hist(&m.service)),
        intervals.join(", "),
        jnum(m.user_s), jnum(m.sys_s), jnum(r.cores_used), r.saturated
    )
}

pub fn json(o: &Options, results: &[TestResult]) -> String {
    let tests: Vec<String> = results.iter().map(|r| test_json(o, r, o.precision)).collect();
    format!(
        "{{\"format\": \"kvload\", \"version\": 1, \"kvload_version\": {},\n \"config\": {},\n \"tests\": [\n  {}\n ]}}\n",
        jstr(env!("CARGO_PKG_VERSION")),
        config_json(o),
        tests.join(",\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escaping() {
        assert_eq!(jstr("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(jnum(1.5), "1.5");
        assert_eq!(jnum(f64::NAN), "null");
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
