//! run: kvload's own run — the servers found once, then each test (or each step of a
//! staircase) compiled into plans and run on the engine, its result printed and, with
//! --json, kept for the report written at the end.

use std::sync::Arc;

use crate::base::event_loop::{self, IoChoice, IoUsed};
use crate::base::rng::default_seed;
use crate::engine::stats::Merged;
use crate::engine::threads;
use crate::report::{self, RunInfo, TestResult};
use crate::workload::batches::TemplateBatches;
use crate::workload::cluster::tag_table;
use crate::workload::dataset::{DataPlan, DataTemplate, Dataset};
use crate::workload::spec::{self, Spec, Suite};
use crate::workload::staircase::{self, combine, Ramp, StepResult};
use crate::workload::values::VarTemplate;

use super::nodes::Servers;
use super::options::Options;
use super::plan::{plans, Common};

/// What every test of a run shares.
struct Shared {
    servers: Servers,
    /// Cluster mode: a `{tag}` per slot.
    tags: Arc<Vec<[u8; 3]>>,
    seed: u64,
    server_config: Vec<String>,
    io: IoUsed,
    dataset: Option<Dataset>,
    /// The run as the report describes it.
    info: RunInfo,
}

/// Runs everything; returns the process exit code.
pub fn run(o: &Options) -> i32 {
    // --reconnect-on-error is implemented on the epoll loop only.
    let choice = if o.reconnect_on_error { IoChoice::Epoll } else { o.io };
    let io = match event_loop::resolve_and_note(choice, o.tls.enabled) {
        Ok(io) => io,
        Err(e) => {
            eprintln!("kvload: {e}");
            return 2;
        }
    };
    // A bad dataset or a column the command names that it lacks is bad input: exit 2.
    let dataset = match load_dataset(o) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("kvload: {e}");
            return 2;
        }
    };
    match try_run(o, io, dataset) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

fn load_dataset(o: &Options) -> Result<Option<Dataset>, String> {
    let Some(path) = o.dataset.as_deref() else { return Ok(None) };
    let ds = Dataset::load(path)?;
    DataTemplate::compile(&spec::custom(&o.command, o.data_size)?, &ds, o.keyspace.is_some())?;
    Ok(Some(ds))
}

/// The tests of the run: the built-in suite (by -t) or the custom command.
fn specs(o: &Options) -> Result<Vec<Spec>, String> {
    if o.command.is_empty() {
        let suite = Suite { tests: o.tests.as_deref(), cluster: o.cluster, data_size: o.data_size, randomize: o.keyspace.is_some() };
        return Ok(spec::builtin(&suite).iter().map(|s| shaped(o, s)).collect());
    }
    Ok(vec![shaped(o, &spec::custom(&o.command, o.data_size)?)])
}

/// A test with --value-size's, --value-content's and --ttl's values.
fn shaped(o: &Options, s: &Spec) -> Spec {
    if o.shapes_values() { o.values().apply(s, o.data_size) } else { s.clone() }
}

fn try_run(o: &Options, io: IoUsed, dataset: Option<Dataset>) -> Result<(), String> {
    let specs = specs(o)?;
    let mut servers = Servers::discover(o)?;
    let tags = Arc::new(if o.cluster { tag_table() } else { Vec::new() });
    let server_config = servers.config_lines(o);
    servers.find_replicas(o)?;
    let seed = o.seed.unwrap_or_else(default_seed);
    let sh = Shared { servers, tags, seed, server_config, io, dataset, info: o.run_info() };
    if o.csv {
        println!("{}", report::CSV_HEADER);
    }
    let results = run_tests(o, &sh, &specs)?;
    if !o.csv && !o.quiet && o.command.is_empty() {
        println!();
    }
    if let Some(path) = &o.json {
        std::fs::write(path, report::json(&sh.info, &sh.io, &results)).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

/// Runs the tests (again and again with -l), printing each result; returns them for --json.
fn run_tests(o: &Options, sh: &Shared, specs: &[Spec]) -> Result<Vec<TestResult>, String> {
    let mut results = Vec::new();
    loop {
        for s in specs {
            let r = run_test(o, sh, s)?;
            report::print(&sh.info, &r, &sh.server_config);
            if o.json.is_some() {
                results.push(r);
            }
        }
        if !o.repeat {
            return Ok(results);
        }
    }
}

fn run_test(o: &Options, sh: &Shared, spec: &Spec) -> Result<TestResult, String> {
    if let Some(ramp) = o.ramp() {
        return run_ramp(o, sh, spec, &ramp);
    }
    Ok(TestResult::new(&sh.info, spec.name.clone(), measure(o, sh, spec)?))
}

/// A staircase: each step one measured run with that step's connections (its seconds,
/// at most as many threads as connections; --warmup before the first step only); the
/// test's result has the totals over the ramp and one `StepResult` per step.
fn run_ramp(o: &Options, sh: &Shared, spec: &Spec, r: &Ramp) -> Result<TestResult, String> {
    let total = o.duration.unwrap_or(0.0);
    let steps = staircase::schedule(r, o.clients, total.ceil() as u64);
    let mut results = Vec::new();
    let mut parts = Vec::new();
    for (k, s) in steps.iter().enumerate() {
        let seconds = (s.to_s as f64).min(total) - s.from_s as f64;
        let step = Options {
            clients: s.clients,
            threads: o.threads.min(s.clients),
            duration: Some(seconds),
            warmup: if k == 0 { o.warmup } else { 0.0 },
            ..o.clone()
        };
        let m = measure(&step, sh, spec)?;
        results.push(StepResult::of(k, s.clients, s, &m));
        parts.push(m);
    }
    if !o.quiet && !o.csv {
        print!("{}", staircase::table(&results));
    }
    let totals = combine(parts).ok_or("internal error: a staircase without steps")?;
    let mut t = TestResult::new(&sh.info, spec.name.clone(), totals);
    t.steps = Some(results);
    Ok(t)
}

/// A test's requests: its template, and with --dataset the rows that fill it.
fn batches(o: &Options, sh: &Shared, spec: &Spec) -> Result<TemplateBatches, String> {
    let mut template = spec::encode(spec, o.keyspace.is_some(), o.cluster)?;
    if o.independent_keys {
        template = spec::independent_keys(template)?;
    }
    let dataset = match &sh.dataset {
        Some(ds) => Some(Arc::new(DataPlan { t: DataTemplate::compile(spec, ds, o.keyspace.is_some())?, ds: ds.clone(), keyspace: o.keyspace.unwrap_or(0) })),
        None => None,
    };
    let values = o.values();
    let var = values.varies().then(|| Arc::new(VarTemplate::new(&template, &values)));
    Ok(TemplateBatches { template: Arc::new(template), tags: sh.tags.clone(), dataset, var })
}

/// One measured run of a test with these options (a staircase step runs one each).
fn measure(o: &Options, sh: &Shared, spec: &Spec) -> Result<Merged, String> {
    let batches = batches(o, sh, spec)?;
    let nodes = sh.servers.test_nodes(o, spec)?;
    let common = Common { connect: &sh.servers.connect, seed: sh.seed, io: sh.io.kind };
    let merged = threads::run(&plans(o, &common, &nodes, &batches), o.precision)?;
    if let (Some(path), Some(acks)) = (&o.reconnect_opts.ack_log, &merged.timeline.acks) {
        std::fs::write(path, acks).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(merged)
}
