//! runner: turns Options into per-thread plans, runs each test, reports.

use std::sync::{Arc, Barrier};

use crate::frontend::native::options::Options;
use crate::base::slots;
use crate::workload::dataset::{DataPlan, Dataset, DataTemplate};
use crate::base::event_loop::{self, IoUsed};
use crate::engine::worker::{self, Plan};
use crate::workload::replicas::{self, Nodes, ReadFrom, Shard};
use crate::report::{self, TestResult};
use crate::base::resp::Value;
use crate::base::schedule;
use crate::workload::spec::{self, Spec};
use crate::engine::stats;
use crate::base::resp::encode_args;
use crate::base::rng::default_seed;
use crate::base::session::connect_spec;
use crate::base::transport::{self, ConnectSpec, Endpoint};
use crate::workload::keys::KeyGen;

fn seed_endpoint(o: &Options) -> Endpoint {
    match &o.socket {
        Some(s) => Endpoint::Unix(s.clone()),
        None => Endpoint::Tcp(o.host.clone(), o.port),
    }
}

/// Endpoints and per-node slot lists (one node, no slots, outside cluster mode).
pub(crate) fn topology(o: &Options, cs: &ConnectSpec) -> Result<(Vec<Endpoint>, Vec<Vec<u16>>), String> {
    let seed = seed_endpoint(o);
    let pong = transport::command(&seed, cs, &encode_args(&[b"PING"]))?;
    if let Value::Error(e) = pong {
        return Err(format!("Error from server {seed}: {e}"));
    }
    if !o.cluster {
        let mut eps = vec![seed];
        eps.extend(o.reconnect().iter().flat_map(|r| r.fallback.iter()).map(|(h, p)| Endpoint::Tcp(h.clone(), *p)));
        let slots = vec![Vec::new(); eps.len()];
        return Ok((eps, slots));
    }
    let reply = transport::command(&seed, cs, &encode_args(&[b"CLUSTER", b"SLOTS"]))?;
    let nodes = slots::nodes_from_slots(&reply)
        .map_err(|e| format!("Failed to fetch cluster configuration from {seed}: {e}"))?;
    if o.clients < nodes.len() {
        return Err(format!("-c must be at least the number of primaries ({})", nodes.len()));
    }
    if !o.csv && !o.quiet {
        println!("Cluster has {} primary nodes:\n", nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            println!("Primary {i}: {}:{}", n.host, n.port);
        }
        println!();
    }
    let mut eps: Vec<Endpoint> = nodes.iter().map(|n| Endpoint::Tcp(n.host.clone(), n.port)).collect();
    let mut slots: Vec<Vec<u16>> = nodes.into_iter().map(|n| n.slots).collect();
    if o.reconnect().is_some() {
        // the replicas too (CLUSTER NODES: CLUSTER SLOTS may not list them yet), serving
        // no slot: one may take over its primary's
        let text = transport::command(&seed, cs, &encode_args(&[b"CLUSTER", b"NODES"]))?.as_text().unwrap_or_default();
        for r in replicas::shards_from_nodes(&text)?.into_iter().flat_map(|s| s.replicas) {
            if !eps.contains(&r) {
                eps.push(r);
                slots.push(Vec::new());
            }
        }
    }
    Ok((eps, slots))
}

/// `host configuration "save": ...` lines as valkey-benchmark prints them (best effort).
fn server_config(o: &Options, cs: &ConnectSpec, endpoints: &[Endpoint]) -> Vec<String> {
    if o.csv || o.quiet {
        return Vec::new();
    }
    if o.cluster {
        return vec![format!("cluster mode: yes ({} primaries)", endpoints.len())];
    }
    let ep = &endpoints[0];
    let mut out = Vec::new();
    for name in ["save", "appendonly"] {
        if let Ok(Value::Array(v)) = transport::command(ep, cs, &encode_args(&[b"CONFIG", b"GET", name.as_bytes()])) {
            if let Some(val) = v.get(1).and_then(Value::as_text) {
                out.push(format!("host configuration \"{name}\": {val}"));
            }
        }
    }
    out
}

struct Shared {
    connect: ConnectSpec,
    endpoints: Vec<Endpoint>,
    slots: Vec<Vec<u16>>,
    tags: Arc<Vec<[u8; 3]>>,
    seed: u64,
    server_config: Vec<String>,
    io: IoUsed,
    dataset: Option<Dataset>,
    /// --read-from-replicas: the primaries with their replicas (empty: not asked for).
    shards: Vec<Shard>,
}

/// The shards read tests may go to (--read-from-replicas): CLUSTER NODES' replicas in
/// cluster mode, else the primary's online replicas from INFO replication.
fn shards(o: &Options, cs: &ConnectSpec, endpoints: &[Endpoint]) -> Result<Vec<Shard>, String> {
    if o.read_from == ReadFrom::No {
        return Ok(Vec::new());
    }
    let seed = &endpoints[0];
    if o.cluster {
        let reply = transport::command(seed, cs, &encode_args(&[b"CLUSTER", b"NODES"]))?;
        return replicas::shards_from_nodes(&reply.as_text().unwrap_or_default());
    }
    let info = transport::command(seed, cs, &encode_args(&[b"INFO", b"replication"]))?;
    let text = info.as_text().unwrap_or_default();
    Ok(vec![Shard { primary: seed.clone(), replicas: replicas::standalone_replicas(&text), slots: Vec::new() }])
}

/// True when the server flags every command of the spec `readonly` (COMMAND INFO).
fn is_read(sh: &Shared, spec: &Spec) -> Result<bool, String> {
    for cmd in &spec.commands {
        let Some(name) = cmd.first() else { continue };
        let info = transport::command(&sh.endpoints[0], &sh.connect, &encode_args(&[b"COMMAND", b"INFO", name]))?;
        if !replicas::flagged_readonly(&info) {
            return Ok(false);
        }
    }
    Ok(!spec.commands.is_empty())
}

/// The endpoints of one test: the primaries, or for a read test the replicas the
/// --read-from-replicas mode picks.
fn test_nodes(o: &Options, sh: &Shared, spec: &Spec) -> Result<Nodes, String> {
    if sh.shards.is_empty() {
        return Ok(Nodes { endpoints: sh.endpoints.clone(), slots: sh.slots.clone(), route: None });
    }
    let read = is_read(sh, spec)?;
    replicas::select(&sh.shards, o.read_from, read, o.cluster, &sh.connect)
}

fn plans(o: &Options, sh: &Shared, nodes: &Nodes, template: Arc<spec::Template>, dataset: Option<Arc<DataPlan>>) -> Vec<Plan> {
    let threads = o.threads;
    let route = crate::workload::cluster::plan_route(o.cluster, &template, &nodes.slots);
    let read_route = nodes.route.clone().map(Arc::new);
    let per_batch = o.pipeline * template.ncmds;
    let interval = o.rps.map(|r| schedule::batch_interval_ns(r, o.clients, per_batch));
    let mut conns: Vec<Vec<(usize, usize)>> = vec![Vec::new(); threads];
    for g in 0..o.clients {
        let node = match route {
            crate::engine::route::Route::Fixed(n) => fixed_node(nodes, n, g),
            // Reconnecting standalone: every connection starts at the seed (the rest of
            // the endpoints are its --fallback nodes).
            _ if !o.cluster && o.reconnect().is_some() => 0,
            // Reconnecting in a cluster: the replicas listed after the primaries wait.
            _ if o.cluster && o.reconnect().is_some() => g % serving(&nodes.slots),
            _ => g % nodes.endpoints.len(),
        };
        conns[g % threads].push((node, g));
    }
    let counts: Vec<usize> = conns.iter().map(Vec::len).collect();
    let mut assigned = 0u64;
    (0..threads)
        .map(|t| {
            let quota = match o.duration {
                Some(_) => None,
                None => {
                    let upto = o.requests * (counts[..=t].iter().sum::<usize>() as u64) / o.clients as u64;
                    let q = upto - assigned;
                    assigned = upto;
                    Some(q)
                }
            };
            let seed = sh.seed ^ (t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            Plan {
                endpoints: nodes.endpoints.clone(),
                conns: std::mem::take(&mut conns[t]),
                total_clients: o.clients,
                connect: sh.connect.clone(),
                template: template.clone(),
                pipeline: o.pipeline,
                quota,
                duration_ns: o.duration.map(|d| (d * 1e9) as u64),
                warmup_ns: (o.warmup * 1e9) as u64,
                interval_ns: interval,
                poisson: o.poisson,
                // With --dataset the generator picks rows (in order with --sequential).
                keys: KeyGen::new(seed, dataset.as_ref().map_or(o.keyspace.unwrap_or(0), |d| d.ds.rows() as u64), o.sequential, t as u64, threads as u64),
                slots: nodes.slots.clone(),
                tags: sh.tags.clone(),
                route,
                keepalive: o.keepalive,
                sigfig: o.precision,
                memtier: None,
                io: sh.io.kind,
                dataset: dataset.clone(),
                read_route: read_route.clone(),
                reconnect_ns: o.reconnect().map(|r| r.backoff_ms * 1_000_000),
                ack_log: o.reconnect_opts.ack_log.is_some(),
            }
        })
        .collect()
}

/// The endpoints that serve slots (the primaries, listed first).
fn serving(slots: &[Vec<u16>]) -> usize {
    slots.iter().filter(|s| !s.is_empty()).count().max(1)
}

/// Connection `g` of a fixed-key test whose key endpoint `n` serves: with replica reads,
/// the connections spread over the endpoints of that shard.
fn fixed_node(nodes: &Nodes, n: usize, g: usize) -> usize {
    let Some(r) = &nodes.route else { return n };
    let same: Vec<usize> = (0..r.shard_of.len()).filter(|&e| r.shard_of[e] == r.shard_of[n]).collect();
    same[g % same.len()]
}

fn run_test(o: &Options, sh: &Shared, spec: &Spec) -> Result<TestResult, String> {
    if let Some(ramp) = o.ramp() {
        return crate::workload::staircase::run(o, &ramp, spec.name.clone(), |step| measure(step, sh, spec));
    }
    Ok(TestResult::new(o, spec.name.clone(), measure(o, sh, spec)?))
}

/// One measured run of a test with these options (a staircase step runs one each).
fn measure(o: &Options, sh: &Shared, spec: &Spec) -> Result<stats::Merged, String> {
    let mut template = spec::encode(spec, o.keyspace.is_some(), o.cluster)?;
    if o.independent_keys {
        template = spec::independent_keys(template)?;
    }
    let dataset = match &sh.dataset {
        Some(ds) => Some(Arc::new(DataPlan { t: DataTemplate::compile(spec, ds, o.keyspace.is_some())?, ds: ds.clone(), keyspace: o.keyspace.unwrap_or(0) })),
        None => None,
    };
    let template = Arc::new(template);
    let nodes = test_nodes(o, sh, spec)?;
    let plans = plans(o, sh, &nodes, template, dataset);
    let barrier = Barrier::new(plans.len());
    let parts: Vec<stats::ThreadStats> = std::thread::scope(|s| {
        let handles: Vec<_> = plans.iter().map(|p| s.spawn(|| worker::run(p, &barrier))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if parts.len() != plans.len() {
        return Err("a worker thread failed".into());
    }
    let merged = stats::merge(parts, o.precision);
    if let (Some(path), Some(acks)) = (&o.reconnect_opts.ack_log, &merged.timeline.acks) {
        std::fs::write(path, acks).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(merged)
}

/// Runs everything; returns the process exit code.
pub fn run(o: &Options) -> i32 {
    // --reconnect-on-error is implemented on the epoll loop only.
    let choice = if o.reconnect_on_error { event_loop::IoChoice::Epoll } else { o.io };
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

fn try_run(o: &Options, io: IoUsed, dataset: Option<Dataset>) -> Result<(), String> {
    let specs = if o.command.is_empty() {
        spec::builtin(o)
    } else {
        vec![spec::custom(&o.command, o.data_size)?]
    };
    let connect = connect_spec(&o.session())?;
    let (endpoints, slots) = topology(o, &connect)?;
    let tags = Arc::new(if o.cluster { crate::workload::cluster::tag_table() } else { Vec::new() });
    let server_config = server_config(o, &connect, &endpoints);
    let shards = shards(o, &connect, &endpoints)?;
    let sh = Shared { connect, endpoints, slots, tags, seed: o.seed.unwrap_or_else(default_seed), server_config, io, dataset, shards };
    if o.csv {
        println!("{}", report::CSV_HEADER);
    }
    let mut results = Vec::new();
    loop {
        for s in &specs {
            let r = run_test(o, &sh, s)?;
            report::print(o, &r, &sh.server_config);
            if o.json.is_some() {
                results.push(r);
            }
        }
        if !o.repeat {
            break;
        }
    }
    if !o.csv && !o.quiet && o.command.is_empty() {
        println!();
    }
    if let Some(path) = &o.json {
        std::fs::write(path, report::json(o, &sh.io, &results)).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}
