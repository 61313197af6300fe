//! memtier report: results of memtier runs as memtier prints them (the stats table,
//! the latency distribution) and as its --json-out-file lays them out
//! ("ALL STATS" → "Totals" / "Sets" / "Hsets" ... → "Ops/sec", "Percentile Latencies" ...).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::ser::PrettyFormatter;
use serde_json::value::RawValue;

use crate::engine::stats::{new_hist, CmdStats, Merged};

use super::options::MtOptions;
use super::program::Program;

/// One row of the table (a command type, or Totals) of one run or an average.
#[derive(Clone)]
pub struct Row {
    /// "Sets", "Hgets", "Totals".
    pub name: String,
    /// Histogram label: "SET", "HGET" (empty for Totals).
    pub kind: String,
    pub count: u64,
    pub ops_sec: f64,
    pub hits_sec: f64,
    pub misses_sec: f64,
    pub kb_rx: f64,
    pub kb_tx: f64,
    /// Mean latency (ms).
    pub latency: f64,
    pub hist: Histogram<u64>,
}

impl Row {
    fn kb_sec(&self) -> f64 {
        self.kb_rx + self.kb_tx
    }
}

/// Results of one run (or the average of several) in memtier's terms.
#[derive(Clone)]
pub struct Summary {
    pub rows: Vec<Row>,
    pub totals: Row,
    /// Wall-clock start/finish (ms since the epoch).
    pub start_ms: u64,
    pub finish_ms: u64,
    /// (second, requests, p50 ms, p99 ms) of the Totals time series.
    pub seconds: Vec<(usize, u64, f64, f64)>,
    /// A staircase run: (clients per thread, results) of each step (empty otherwise).
    pub staircase: Vec<(usize, crate::workload::staircase::StepResult)>,
}

fn mean_ms(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.mean() / 1000.0
    }
}

fn row(name: &str, kind: &str, c: &CmdStats, secs: f64) -> Row {
    let per = |v: u64| v as f64 / secs;
    Row {
        name: name.to_string(),
        kind: kind.to_string(),
        count: c.requests,
        ops_sec: per(c.requests),
        hits_sec: per(c.hits),
        misses_sec: per(c.misses),
        kb_rx: per(c.bytes_rx) / 1024.0,
        kb_tx: per(c.bytes_tx) / 1024.0,
        latency: mean_ms(&c.hist),
        hist: c.hist.clone(),
    }
}

impl Summary {
    /// From one run's merged stats (`m.cmds` in the order of `p.stats`).
    pub fn of_run(p: &Program, m: &Merged, start_ms: u64, finish_ms: u64) -> Summary {
        let secs = m.rate_duration_s().max(1e-9);
        let mut all = CmdStats::new(3);
        let mut rows = Vec::new();
        for ((name, kind), c) in p.stats.iter().zip(&m.cmds) {
            all.add(c);
            rows.push(row(name, kind, c, secs));
        }
        let seconds = m.intervals.iter().enumerate().map(|(i, iv)| (i, iv.requests, iv.p50_ms, iv.p99_ms)).collect();
        Summary { rows, totals: row("Totals", "", &all, secs), start_ms, finish_ms, seconds, staircase: Vec::new() }
    }

    /// memtier's aggregate_average: rates and mean latencies averaged, histograms merged.
    pub fn average(runs: &[Summary]) -> Option<Summary> {
        let first = runs.first()?;
        let n = runs.len() as f64;
        let avg = |pick: &dyn Fn(&Summary) -> &Row, base: &Row| {
            let mut r = base.clone();
            r.hist = new_hist(3);
            r.count = 0;
            let (mut ops, mut hits, mut misses, mut rx, mut tx, mut lat) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            for s in runs {
                let x = pick(s);
                let _ = r.hist.add(&x.hist);
                r.count += x.count;
                ops += x.ops_sec;
                hits += x.hits_sec;
                misses += x.misses_sec;
                rx += x.kb_rx;
                tx += x.kb_tx;
                lat += x.latency;
            }
            (r.ops_sec, r.hits_sec, r.misses_sec, r.kb_rx, r.kb_tx, r.latency) = (ops / n, hits / n, misses / n, rx / n, tx / n, lat / n);
            r
        };
        let rows = (0..first.rows.len()).map(|i| avg(&|s: &Summary| &s.rows[i], &first.rows[i])).collect();
        let totals = avg(&|s: &Summary| &s.totals, &first.totals);
        let start_ms = runs.iter().map(|s| s.start_ms).sum::<u64>() / runs.len() as u64;
        let finish_ms = runs.iter().map(|s| s.finish_ms).sum::<u64>() / runs.len() as u64;
        Some(Summary { rows, totals, start_ms, finish_ms, seconds: Vec::new(), staircase: Vec::new() })
    }
}

/// The sections memtier prints: ("ALL STATS", run) for one run; with -x, the runs
/// (with --print-all-runs), then BEST, WORST and the AGGREGATED AVERAGE.
pub fn sections(o: &MtOptions, runs: &[Summary]) -> Vec<(String, Summary)> {
    if runs.len() == 1 {
        return vec![("ALL STATS".into(), runs[0].clone())];
    }
    let mut out = Vec::new();
    if o.print_all_runs {
        out.extend(runs.iter().enumerate().map(|(i, r)| (format!("RUN #{} RESULTS", i + 1), r.clone())));
    }
    let by_ops = |a: &&Summary, b: &&Summary| a.totals.ops_sec.total_cmp(&b.totals.ops_sec);
    if let (Some(best), Some(worst)) = (runs.iter().max_by(by_ops), runs.iter().min_by(by_ops)) {
        out.push(("BEST RUN RESULTS".into(), best.clone()));
        out.push(("WORST RUN RESULTS".into(), worst.clone()));
    }
    if let Some(avg) = Summary::average(runs) {
        out.push((format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()), avg));
    }
    out
}

/// "p50", "p99.9", "p99.990": up to 3 decimals, as many as memtier's single-precision
/// loop finds (99.99 is 99.98999786 as a float, so it gets three).
fn quantile_label(q: f64) -> String {
    let mut d = 0;
    let mut frac = (q as f32).abs().fract();
    while frac.abs() > 0.001 && d < 3 {
        frac = (frac * 10.0).fract();
        d += 1;
    }
    format!("p{:.d$}", q as f32 as f64)
}

/// JSON key of a percentile: memtier writes "p%.3f" into 7 bytes, so "p50.00", "p99.90".
pub fn quantile_key(q: f64) -> String {
    let mut s = format!("p{:.3}", q as f32 as f64);
    s.truncate(6);
    s
}

fn pct_ms(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q / 100.0) as f64 / 1000.0
    }
}

/// The run header memtier prints once before the tables.
pub fn run_header(o: &MtOptions) -> String {
    let (n, what) = match o.requests_per_client() {
        Some(n) => (n, "Requests per client"),
        None => (o.test_time.unwrap_or(0), "Seconds"),
    };
    format!("{:<9} Threads\n{:<9} Connections per thread\n{:<9} {what}\n", o.threads, o.clients, n)
}

/// One section: the table and (unless --hide-histogram) the latency distribution.
pub fn text(o: &MtOptions, p: &Program, header: &str, s: &Summary) -> String {
    let w = s.rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(6) + 1;
    let mut cols: Vec<(usize, String)> = vec![(w, "Type".into()), (12, "Ops/sec".into())];
    if p.ratio_mode {
        cols.push((12, "Hits/sec".into()));
        cols.push((12, "Misses/sec".into()));
    }
    cols.push((15, "Avg. Latency".into()));
    cols.extend(o.print_percentiles.iter().map(|&q| (15, format!("{} Latency", quantile_label(q)))));
    cols.push((12, "KB/sec".into()));
    let mut t = String::new();
    let _ = write!(t, "\n\n{header}\n{}\n", "=".repeat(cols.iter().map(|c| c.0 + 1).sum()));
    for (i, (cw, name)) in cols.iter().enumerate() {
        if i == 0 {
            let _ = write!(t, "{name:<cw$} ");
        } else {
            let _ = write!(t, "{name:>cw$} ");
        }
    }
    let _ = writeln!(t);
    for (cw, _) in &cols {
        t.push_str(&"-".repeat(cw + 1));
    }
    let _ = writeln!(t);
    for r in s.rows.iter().chain(std::iter::once(&s.totals)) {
        table_row(&mut t, o, p, r, w);
    }
    if !o.hide_histogram {
        distribution(&mut t, s);
    }
    t
}

fn table_row(t: &mut String, o: &MtOptions, p: &Program, r: &Row, w: usize) {
    let _ = write!(t, "{:<w$} {:>12.2} ", r.name, r.ops_sec);
    let hits_row = r.kind == "GET" || r.name == "Totals";
    if p.ratio_mode {
        if hits_row {
            let _ = write!(t, "{:>12.2} {:>12.2} ", r.hits_sec, r.misses_sec);
        } else {
            let _ = write!(t, "{:>12} {:>12} ", "---", "---");
        }
    }
    let empty = r.hist.is_empty() && r.name != "Totals";
    if empty && p.ratio_mode {
        let _ = write!(t, "{:>15} ", "---");
        for _ in &o.print_percentiles {
            let _ = write!(t, "{:>15} ", "---");
        }
    } else {
        let _ = write!(t, "{:>15.5} ", mean_ms(&r.hist));
        for &q in &o.print_percentiles {
            let _ = write!(t, "{:>15.5} ", pct_ms(&r.hist, q));
        }
    }
    if r.name == "Waits" {
        let _ = writeln!(t, "{:>12} ", "---");
    } else {
        let _ = writeln!(t, "{:>12.2} ", r.kb_sec());
    }
}

/// (≤ ms, percent) points of a histogram, 10 per halving of the tail (memtier's granularity).
fn distribution_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    h.iter_quantiles(10)
        .map(|v| (h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0, v.quantile_iterated_to() * 100.0))
        .collect()
}

fn distribution(t: &mut String, s: &Summary) {
    let _ = write!(t, "\n\nRequest Latency Distribution\n{:<6} {:>12} {:>12}\n{}\n", "Type", "<= msec   ", "Percent", "-".repeat(72));
    for r in &s.rows {
        let mut last = String::new();
        for (ms, pct) in distribution_points(&r.hist) {
            let line = format!("{:<6} {ms:8.3} {pct:12.3}\n", r.kind);
            if line != last {
                t.push_str(&line);
            }
            last = line;
        }
        let _ = writeln!(t, "---");
    }
}

// ---------- JSON (memtier's layout) ----------

/// A JSON value in memtier's layout: objects keep their key order (section and
/// row names are data), numbers keep the text memtier would print (`20.00`).
/// Serialised with serde_json (tab-indented, as memtier writes it).
pub enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Str(String),
    /// A number as printed (`"20.00"`), or `None` for null.
    Num(Option<String>),
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Obj(items) => {
                let mut m = s.serialize_map(Some(items.len()))?;
                for (k, v) in items {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            J::Arr(items) => s.collect_seq(items),
            J::Str(v) => s.serialize_str(v),
            J::Num(None) => s.serialize_none(),
            J::Num(Some(text)) => match RawValue::from_string(text.clone()) {
                Ok(raw) => raw.serialize(s),
                Err(_) => s.serialize_none(),
            },
        }
    }
}

fn jstr(s: &str) -> J {
    J::Str(s.to_string())
}

fn num(text: String) -> J {
    J::Num(Some(text))
}

fn f2(v: f64) -> J {
    J::Num(v.is_finite().then(|| format!("{v:.2}")))
}

fn f3(v: f64) -> J {
    J::Num(v.is_finite().then(|| format!("{v:.3}")))
}

fn int(v: u64) -> J {
    num(v.to_string())
}

fn obj(items: Vec<(&str, J)>) -> J {
    J::Obj(items.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The value as memtier writes its JSON: tab-indented, a newline at the end.
pub fn render(j: &J) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(b"\t"));
    if j.serialize(&mut ser).is_err() {
        return "{}\n".into();
    }
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

fn row_json(o: &MtOptions, r: &Row, seconds: &[(usize, u64, f64, f64)]) -> J {
    let h = &r.hist;
    let (min, max) = if h.is_empty() { (0.0, 0.0) } else { (h.min() as f64 / 1000.0, h.max() as f64 / 1000.0) };
    let accumulated = (r.latency * r.count as f64) as u64;
    let mut items = vec![
        ("Count", int(r.count)),
        ("Ops/sec", f2(r.ops_sec)),
        ("Hits/sec", f2(r.hits_sec)),
        ("Misses/sec", f2(r.misses_sec)),
    ];
    if o.cluster_mode {
        items.push(("MOVED/sec", f2(0.0)));
        items.push(("ASK/sec", f2(0.0)));
    }
    items.extend([
        ("Connection Errors/sec", f2(0.0)),
        ("Connection Errors", int(0)),
        ("Latency", f3(r.latency)),
        ("Average Latency", f3(r.latency)),
        ("Accumulated Latency", int(accumulated)),
        ("Min Latency", f3(min)),
        ("Max Latency", f3(max)),
        ("KB/sec", f2(r.kb_sec())),
        ("KB/sec RX/TX", f2(r.kb_sec())),
        ("KB/sec RX", f2(r.kb_rx)),
        ("KB/sec TX", f2(r.kb_tx)),
    ]);
    let series = seconds
        .iter()
        .map(|&(sec, count, p50, p99)| {
            (sec.to_string(), obj(vec![("Count", int(count)), ("p50.00", f3(p50)), ("p99.00", f3(p99))]))
        })
        .collect();
    items.push(("Time-Serie", J::Obj(series)));
    let mut pcts: Vec<(String, J)> = o.print_percentiles.iter().map(|&q| (quantile_key(q), f3(pct_ms(h, q)))).collect();
    pcts.push(("Histogram log format".into(), obj(vec![("Compressed Histogram", jstr(&crate::report::encode_hist(h)))])));
    items.push(("Percentile Latencies", J::Obj(pcts)));
    obj(items)
}

/// One section ("ALL STATS", "BEST RUN RESULTS", ...) in memtier's layout.
pub fn section_json(o: &MtOptions, s: &Summary) -> J {
    let mut items: Vec<(String, J)> = vec![(
        "Runtime".into(),
        obj(vec![
            ("Start time", int(s.start_ms)),
            ("Finish time", int(s.finish_ms)),
            ("Total duration", int(s.finish_ms.saturating_sub(s.start_ms))),
            ("Time unit", jstr("MILLISECONDS")),
            ("Interrupted", jstr("false")),
        ]),
    )];
    for r in &s.rows {
        items.push((r.name.clone(), row_json(o, r, &[])));
    }
    items.push(("Totals".into(), row_json(o, &s.totals, &s.seconds)));
    if let Some(r) = o.ramp() {
        items.push(("Active Clients".into(), active_clients(o, &r, &s.seconds)));
        items.push(("Staircase".into(), staircase_json(&s.staircase)));
    }
    if !o.hide_histogram {
        for r in &s.rows {
            let points = distribution_points(&r.hist)
                .into_iter()
                .map(|(ms, pct)| obj(vec![("<=msec", f3(ms)), ("percent", f3(pct))]))
                .collect();
            items.push((r.kind.clone(), J::Arr(points)));
        }
    }
    J::Obj(items)
}

/// memtier's "Active Clients": per second of the time series, the clients per thread
/// the ramp had then (start + whole steps done × step, at most -c) and all threads' total.
fn active_clients(o: &MtOptions, r: &crate::workload::staircase::Ramp, seconds: &[(usize, u64, f64, f64)]) -> J {
    let per_second = seconds
        .iter()
        .map(|&(ts, ..)| {
            let active = (r.start + (ts as u64 / r.step_s) as usize * r.step).min(o.clients);
            (ts.to_string(), obj(vec![("Clients per thread", int(active as u64)), ("Total clients", int((active * o.threads) as u64))]))
        })
        .collect();
    J::Obj(per_second)
}

/// kvload's "Staircase" (memtier has no per-step block): one entry per step, in order.
fn staircase_json(steps: &[(usize, crate::workload::staircase::StepResult)]) -> J {
    J::Arr(
        steps
            .iter()
            .map(|(per_thread, s)| {
                obj(vec![
                    ("Step", int(s.step as u64)),
                    ("Clients per thread", int(*per_thread as u64)),
                    ("Connections", int(s.connections as u64)),
                    ("From second", int(s.from_s)),
                    ("To second", int(s.to_s)),
                    ("Count", int(s.requests)),
                    ("Ops/sec", f2(s.ops_sec)),
                    ("p50.00", f3(s.p50_ms)),
                    ("p99.00", f3(s.p99_ms)),
                    ("p99.90", f3(s.p99_9_ms)),
                ])
            })
            .collect(),
    )
}

/// The configuration block (memtier's key names; values as kvload ran them).
pub fn config_json(o: &MtOptions) -> J {
    let (ra, rb) = o.ratio_or_default();
    let (ps, pg) = o.key_pattern_or_default();
    let opt = |v: &Option<String>| v.as_deref().map_or(J::Num(None), jstr);
    let (dr_lo, dr_hi) = o.data_size_range.unwrap_or((0, 0));
    let mut cfg = obj(vec![
        ("server", jstr(&o.host)),
        ("port", int(o.port as u64)),
        ("uri", jstr(o.uri.as_deref().unwrap_or(""))),
        ("unix socket", opt(&o.socket)),
        ("protocol", jstr(match o.protocol {
            super::options::Protocol::Redis => "redis",
            super::options::Protocol::Resp2 => "resp2",
            super::options::Protocol::Resp3 => "resp3",
        })),
        ("out_file", opt(&o.out_file)),
        ("tls", jstr(if o.tls.enabled { "true" } else { "false" })),
        ("run_count", int(o.run_count as u64)),
        ("requests", int(o.requests_per_client().unwrap_or(0))),
        ("clients", int(o.clients as u64)),
        ("threads", int(o.threads as u64)),
        ("test_time", int(o.test_time.unwrap_or(0))),
        ("ratio", jstr(&format!("{ra}:{rb}"))),
        ("pipeline", int(o.pipeline as u64)),
        ("data_size", int(o.data_size.unwrap_or(if o.data_size_range.is_some() { 0 } else { 32 }) as u64)),
        ("random_data", jstr(if o.random_data { "true" } else { "false" })),
        ("data_size_range", jstr(&format!("{dr_lo}:{dr_hi}"))),
        ("key_prefix", jstr(&o.key_prefix)),
        ("key_minimum", int(o.key_min)),
        ("key_maximum", int(o.key_max)),
        ("key_pattern", jstr(&format!("{}:{}", ps.letter(), pg.letter()))),
        ("key_stddev", num(format!("{:.6}", o.key_stddev))),
        ("key_median", num(format!("{:.6}", o.key_median))),
        ("key_zipf_exp", num(format!("{:.6}", o.key_zipf_exp))),
        ("select-db", int(o.select_db as u64)),
        ("print-all-runs", jstr(if o.print_all_runs { "true" } else { "false" })),
    ]);
    if let (J::Obj(items), Some(r)) = (&mut cfg, o.ramp()) {
        items.push(("clients_start".into(), int(r.start as u64)));
        items.push(("clients_step".into(), int(r.step as u64)));
        items.push(("step_duration".into(), int(r.step_s)));
    }
    if let J::Obj(items) = &mut cfg {
        items.push(("load generator".into(), jstr(&format!("kvload {} (memtier front end)", env!("CARGO_PKG_VERSION")))));
    }
    cfg
}


/// The whole --json-out-file.
pub fn json(o: &MtOptions, sections: &[(String, Summary)]) -> String {
    let (n, what) = match o.requests_per_client() {
        Some(n) => (n, "Requests per client"),
        None => (o.test_time.unwrap_or(0), "Seconds"),
    };
    let mut top = vec![
        ("configuration".to_string(), config_json(o)),
        (
            "run information".to_string(),
            obj(vec![
                ("Threads", int(o.threads as u64)),
                ("Connections per thread", int(o.clients as u64)),
                (what, int(n)),
                ("Format version", int(2)),
            ]),
        ),
    ];
    top.extend(sections.iter().map(|(name, s)| (name.clone(), section_json(o, s))));
    render(&J::Obj(top))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_names() {
        assert_eq!(quantile_key(50.0), "p50.00");
        assert_eq!(quantile_key(99.9), "p99.90");
        assert_eq!(quantile_key(99.99), "p99.99");
        assert_eq!(quantile_key(100.0), "p100.0");
        assert_eq!(quantile_label(50.0), "p50");
        assert_eq!(quantile_label(99.9), "p99.9");
        assert_eq!(quantile_label(99.99), "p99.990");
    }

    fn summary(ops: f64, lat_us: u64) -> Summary {
        let mut h = new_hist(3);
        h.saturating_record(lat_us);
        let r = Row { name: "Sets".into(), kind: "SET".into(), count: 1, ops_sec: ops, hits_sec: 0.0, misses_sec: 0.0, kb_rx: 1.0, kb_tx: 1.0, latency: lat_us as f64 / 1000.0, hist: h };
        let mut t = r.clone();
        t.name = "Totals".into();
        Summary { rows: vec![r], totals: t, start_ms: 1000, finish_ms: 2000, seconds: vec![(0, 1, 0.1, 0.2)], staircase: Vec::new() }
    }

    #[test]
    fn run_count_sections_and_json_paths() {
        let o = MtOptions { run_count: 2, ..Default::default() };
        let runs = [summary(10.0, 1000), summary(30.0, 3000)];
        let s = sections(&o, &runs);
        let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (2 runs)"]);
        assert_eq!(s[0].1.totals.ops_sec, 30.0);
        assert_eq!(s[2].1.totals.ops_sec, 20.0);
        assert_eq!(s[2].1.totals.hist.len(), 2);
        let v: serde_json::Value = serde_json::from_str(&json(&o, &s)).expect("valid JSON");
        let t = &v["AGGREGATED AVERAGE RESULTS (2 runs)"]["Totals"];
        assert_eq!(t["Ops/sec"].as_f64(), Some(20.0));
        assert!(t["Percentile Latencies"]["p50.00"].as_f64().is_some());
        assert!(t["Percentile Latencies"]["p99.90"].as_f64().is_some());
        assert_eq!(v["BEST RUN RESULTS"]["Runtime"]["Total duration"].as_u64(), Some(1000));
        assert!(v["BEST RUN RESULTS"]["SET"].is_array());
        assert_eq!(v["run information"]["Requests per client"].as_u64(), Some(10000));
    }
}
