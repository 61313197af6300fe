//! run: a memtier run — set up once, then -x runs on kvload's engine (each a plain run or
//! a staircase of steps); writes memtier's text and JSON, and kvload's JSON.

use crate::base::event_loop::IoUsed;
use crate::engine::plan::DRAIN_LIMIT_NS;
use crate::engine::stats::Merged;
use crate::engine::threads;
use crate::report::{self as kvload_report, TestResult};
use crate::workload::staircase::{self, combine, schedule, Ramp, StepResult};

use super::options::{MtOptions, Requests};
use super::plan::{plans, setup, Setup};
use super::report::{self, Summary};

fn epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The engine over one plan per thread: merged stats.
fn engine(o: &MtOptions, s: &Setup) -> Result<Merged, String> {
    threads::run(&plans(o, s), 3)
}

/// (clients per thread, results) of each step of a staircase run.
type Steps = Vec<(usize, StepResult)>;

/// A staircase run (`workload::staircase`): each step on the engine with that step's clients
/// per thread for its seconds; the totals over the ramp and the steps' results.
fn staircase(o: &MtOptions, s: &Setup, r: &Ramp, run_id: u32) -> Result<(Merged, Steps), String> {
    let steps = schedule(r, o.clients, o.test_time.unwrap_or(0));
    eprintln!("[RUN #{run_id}] Client staircase pattern (per thread x {} threads):", o.threads);
    for (k, st) in steps.iter().enumerate() {
        let max = if st.clients >= o.clients { "  (max)" } else { "" };
        eprintln!("  Step {k}: {:3}s - {:3}s : {:3} clients{max}", st.from_s, st.to_s, st.clients);
    }
    // Connections per client: one per primary (and replica) when requests are routed.
    let per_client = if o.cluster_mode || s.read_route.is_some() { s.endpoints.len() } else { 1 };
    let (mut parts, mut results) = (Vec::new(), Vec::new());
    for (k, st) in steps.iter().enumerate() {
        let step = MtOptions { clients: st.clients, test_time: Some(st.seconds()), ..o.clone() };
        let m = engine(&step, s)?;
        results.push((st.clients, StepResult::of(k, st.clients * o.threads * per_client, st, &m)));
        parts.push(m);
    }
    let steps_only: Vec<StepResult> = results.iter().map(|(_, r)| r.clone()).collect();
    eprint!("{}", staircase::table(&steps_only));
    Ok((combine(parts).ok_or("internal error: a staircase without steps")?, results))
}

/// One run on the engine: merged stats, its wall-clock start/finish and, with a
/// staircase, (clients per thread, results) of each step.
fn run_once(o: &MtOptions, s: &Setup, run_id: u32) -> Result<(Merged, u64, u64, Steps), String> {
    eprintln!("[RUN #{run_id}] Preparing benchmark client...");
    let start = epoch_ms();
    let (m, steps) = match o.ramp() {
        Some(r) => staircase(o, s, &r, run_id)?,
        None => (engine(o, s)?, Vec::new()),
    };
    // memtier's Runtime and rates: the mean client end minus the start (see Merged).
    let secs = m.rate_duration_s();
    let finish = start + (secs * 1000.0) as u64;
    let ops_sec = m.requests as f64 / secs.max(1e-9);
    // memtier (PR #491) labels connection counts of a staircase "at full ramp".
    let ramp = if steps.is_empty() { "" } else { " at full ramp" };
    eprintln!("[RUN #{run_id} 100%, {:3.0} secs] {} threads {} conns{ramp}: {} ops, {:.0} ops/sec", secs, o.threads, o.clients * o.threads, m.requests, ops_sec);
    warn(&m);
    Ok((m, start, finish, steps))
}

/// The warnings after a run: replies the drain gave up on, error replies.
fn warn(m: &Merged) {
    if m.undrained > 0 {
        eprintln!("WARNING: {} requests in flight at the end of --test-time got no reply within {} s of it; not counted", m.undrained, DRAIN_LIMIT_NS / 1_000_000_000);
    }
    if m.errors.total() > 0 {
        let e = &m.errors;
        eprintln!("WARNING: {} error replies (err={} moved={} ask={} other={}); not counted as ops", e.total(), e.err, e.moved, e.ask, e.other);
        if let Some(first) = &m.first_error {
            eprintln!("WARNING: first error reply: {first}");
        }
    }
}

fn write_file(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))
}

/// Runs -x times and writes every output.
pub fn run(o: &MtOptions, io: IoUsed) -> Result<(), String> {
    let s = setup(o, io)?;
    if o.requests == Requests::AllKeys {
        println!("setting requests to {}", o.allkeys_count());
    }
    let mut summaries = Vec::new();
    let mut merged = Vec::new();
    for run_id in 1..=o.run_count {
        let (m, start, finish, steps) = run_once(o, &s, run_id)?;
        let mut summary = Summary::of_run(&s.program, &m, start, finish);
        summary.staircase = steps;
        summaries.push(summary);
        merged.push(m);
    }
    write_reports(o, &s, &summaries, merged)
}

/// memtier's text (stdout or --out-file), --json-out-file and kvload's --kvload-json.
fn write_reports(o: &MtOptions, s: &Setup, summaries: &[Summary], merged: Vec<Merged>) -> Result<(), String> {
    let sections = report::sections(o, summaries);
    let mut text = report::run_header(o);
    for (name, sum) in &sections {
        text.push_str(&report::text(o, &s.program, name, sum));
    }
    match &o.out_file {
        Some(path) => write_file(path, &text)?,
        None => print!("{text}"),
    }
    if let Some(path) = &o.json_out_file {
        write_file(path, &report::json(o, &sections))?;
    }
    if let Some(path) = &o.kvload_json {
        let name = o.describe();
        let n = merged.len();
        let results: Vec<TestResult> = merged
            .into_iter()
            .enumerate()
            .map(|(i, m)| TestResult::new(&s.info, if n > 1 { format!("{name} (run {})", i + 1) } else { name.clone() }, m))
            .collect();
        write_file(path, &kvload_report::json(&s.info, &s.io, &results))?;
    }
    Ok(())
}
