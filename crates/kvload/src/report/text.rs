//! text: valkey-benchmark's output of a test — the full text (latency by percentile, the
//! cumulative distribution, the summary), `-q`'s one line, or a `--csv` row.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::report::result::{RunInfo, TestResult};

pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

pub fn print(o: &RunInfo, r: &TestResult, server_config: &[String]) {
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

fn text(o: &RunInfo, r: &TestResult, server_config: &[String]) -> String {
    let mut t = String::new();
    let s = &r.corrected;
    let _ = writeln!(t, "====== {} ======", r.name);
    let _ = writeln!(t, "  {} requests completed in {:.2} seconds", r.m.requests, r.m.duration_s);
    // A staircase reaches -c only at its last step (memtier's PR #491 label).
    let ramp = if o.ramp.is_some() { " at full ramp" } else { "" };
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
        let _ = writeln!(t, "  open loop: target {rps:.2} rps, late {} (kvload's own {}), unsent {}", r.m.late, r.m.late_own, r.m.unsent);
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
