//! memtier run: MtOptions → kvload Options (connection, TLS, cluster) and one plan
//! per thread with a memtier client per connection; runs -x times on kvload's
//! engine; writes memtier's text and JSON, and kvload's JSON.

use std::sync::{Arc, Barrier};

use super::options::{MtOptions, MtParsed, Protocol};
use super::program::Program;
use super::read_pref::{self, ReadPref};
use super::report::{self, Summary};
use crate::frontend::native::options::Options;
use crate::engine::route::{ReadRoute, Route};
use crate::base::event_loop::IoUsed;
use crate::engine::worker::{self, MtPlan, Plan};
use crate::report::TestResult;
use crate::base::resp::encode_args;
use crate::base::rng::default_seed;
use crate::base::session::connect_spec;
use crate::frontend::native::run::topology;
use crate::workload::spec::Template;
use crate::workload::staircase::{combine, schedule, Ramp, StepResult};
use crate::engine::stats::{self, Merged};
use crate::base::transport::{ConnectSpec, Endpoint};

/// `kvload memtier ARGS` / `memtier_benchmark ARGS`: the process exit code.
pub fn main(argv: &[String]) -> i32 {
    match super::options::parse(argv) {
        Ok(MtParsed::Help) => {
            print!("{}", super::options::HELP);
            0
        }
        Ok(MtParsed::Version) => {
            println!("memtier_benchmark (kvload {} memtier front end)", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(MtParsed::OptionsJson) => {
            print!("{}", super::table::options_json());
            0
        }
        Ok(MtParsed::Run(o)) => match crate::base::event_loop::resolve_and_note(o.io, o.tls.enabled) {
            Err(e) => {
                eprintln!("memtier_benchmark (kvload): {e}");
                2
            }
            Ok(io) => match run(&o, io) {
            Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: {e}");
                    1
                }
            },
        },
        Err(e) => {
            eprintln!("memtier_benchmark (kvload): {e}");
            2
        }
    }
}

/// (user, password) from memtier's credentials: PASSWORD, USER:PASSWORD, or :PASSWORD.
fn credentials(auth: &str) -> (Option<String>, String) {
    match auth.strip_prefix(':') {
        Some(pw) => (None, pw.to_string()),
        None => match auth.split_once(':') {
            Some((u, pw)) => (Some(u.to_string()), pw.to_string()),
            None => (None, auth.to_string()),
        },
    }
}

/// A one-line description of the workload (kvload JSON test name).
pub fn describe(o: &MtOptions) -> String {
    if o.commands.is_empty() {
        let (a, b) = o.ratio_or_default();
        let (s, g) = o.key_pattern_or_default();
        format!("memtier SET:GET {a}:{b} key-pattern {}:{}", s.letter(), g.letter())
    } else {
        let cmds: Vec<String> = o.commands.iter().map(|c| format!("{} (x{}, {})", c.line, c.ratio, c.pattern.letter())).collect();
        format!("memtier {}", cmds.join("; "))
    }
}

/// The kvload options of the same run (connection setup, kvload JSON config).
pub fn kv_options(o: &MtOptions) -> Options {
    let clients = o.clients * o.threads;
    let (user, password) = match &o.auth {
        Some(a) => {
            let (u, p) = credentials(a);
            (u, Some(p))
        }
        None => (None, None),
    };
    Options {
        host: o.host.clone(),
        port: o.port,
        socket: o.socket.clone(),
        password,
        user,
        clients,
        requests: o.requests_per_client().map_or(0, |n| n * clients as u64),
        duration: o.test_time.map(|t| t as f64),
        warmup: 0.0,
        data_size: o.data_max(),
        dbnum: o.select_db,
        resp3: o.protocol == Protocol::Resp3,
        threads: o.threads,
        cluster: o.cluster_mode,
        quiet: true,
        precision: 3,
        pipeline: o.pipeline,
        json: o.kvload_json.clone(),
        tls: o.tls.clone(),
        command: vec![describe(o)],
        io: o.io,
        ..Options::default()
    }
}

fn placeholder_template() -> Template {
    Template { bytes: Vec::new(), ncmds: 1, rand: Vec::new(), nocc: 0, tags: Vec::new(), cmd_starts: vec![0, 0], key: None, key_rand: 0..0 }
}

struct Setup {
    kv: Options,
    connect: ConnectSpec,
    endpoints: Vec<Endpoint>,
    slots: Vec<Vec<u16>>,
    /// --read-preference / --read-server: endpoints are primaries then replicas, every
    /// request routed by its slot (as in cluster mode) and reads to replicas.
    read_route: Option<Arc<ReadRoute>>,
    program: Arc<Program>,
    /// Seed of every client (plus its index with --distinct-client-seed).
    seed: u64,
    io: IoUsed,
}

fn setup(o: &MtOptions, io: IoUsed) -> Result<Setup, String> {
    let kv = kv_options(o);
    let mut connect = connect_spec(&kv.session())?;
    if o.protocol == Protocol::Resp2 {
        connect.prefix.extend(encode_args(&[b"HELLO", b"2"]));
        connect.prefix_replies += 1;
    }
    // memtier needs no client per primary: each client connects to every one of them
    let (mut endpoints, mut slots) = topology(&Options { clients: usize::MAX, ..kv.clone() }, &connect)?;
    let mut program = Program::new(o);
    let mut read_route = None;
    if o.read_preference != ReadPref::Primary && !o.cluster_mode && o.read_servers.is_empty() {
        eprintln!("WARNING: --read-preference without --cluster-mode or --read-server: reads go to the primary");
    } else if o.read_preference != ReadPref::Primary {
        let shards = read_pref::shards(&endpoints[0], &connect, o.cluster_mode, &o.read_servers)?;
        let routed = read_pref::layout(&shards, o.read_preference, o.cluster_mode, &connect)?;
        program.reads = read_pref::reads(&endpoints[0], &connect, &Program::command_names(o))?;
        program.read_nodes = routed.read_nodes;
        (endpoints, slots, read_route) = (routed.endpoints, routed.slots, Some(Arc::new(routed.route)));
    }
    let mut kv = kv;
    if o.cluster_mode || read_route.is_some() {
        kv.clients *= endpoints.len(); // kvload's JSON counts connections
    }
    let seed = if o.randomize { default_seed() } else { 0 };
    Ok(Setup { kv, connect, endpoints, slots, read_route, program: Arc::new(program), seed, io })
}

/// One plan per thread: thread k has the memtier clients g ≡ k (mod threads), client
/// g with its P slice and, with --distinct-client-seed, its seed; a connection per
/// client, or in cluster mode a connection per client and primary (as memtier).
fn plans(o: &MtOptions, s: &Setup) -> Vec<Plan> {
    let threads = o.threads;
    let total = (o.clients * threads) as u64;
    let routed = o.cluster_mode || s.read_route.is_some();
    let route = if routed { Route::Sampled } else { Route::RoundRobin };
    let nodes = if routed { s.endpoints.len() } else { 1 };
    let per_client = o.requests_per_client();
    let template = Arc::new(placeholder_template());
    (0..threads)
        .map(|t| {
            let ids: Vec<usize> = (t..o.clients * threads).step_by(threads).collect();
            let conns: Vec<(usize, usize)> = ids.iter().flat_map(|&g| (0..nodes).map(move |n| (n, g))).collect();
            let conn_client = (0..ids.len()).flat_map(|j| std::iter::repeat_n(j, nodes)).collect();
            let clients = ids
                .iter()
                .map(|&g| {
                    let seed = if o.distinct_client_seed { s.seed.wrapping_add(g as u64 + 1) } else { s.seed };
                    s.program.client(seed, g as u64, total)
                })
                .collect();
            let quota = per_client.map(|n| n * ids.len() as u64);
            Plan {
                endpoints: s.endpoints.clone(),
                conns,
                total_clients: total as usize,
                connect: s.connect.clone(),
                template: template.clone(),
                pipeline: o.pipeline,
                quota,
                duration_ns: o.test_time.map(|d| d * 1_000_000_000),
                warmup_ns: 0,
                interval_ns: o.rate.map(|r| rate_ticks(r).1),
                poisson: false,
                keys: crate::workload::keys::KeyGen::new(0, 0, false, 0, 1),
                slots: s.slots.clone(),
                tags: Arc::new(Vec::new()),
                route,
                keepalive: true,
                sigfig: 3,
                dataset: None,
                reconnect_ns: None,
                ack_log: false,
                memtier: Some(MtPlan { program: s.program.clone(), clients, conn_client, client_quota: per_client, per_tick: o.rate.map(|r| rate_ticks(r).0), connect_jitter_us: o.connect_jitter_us, reconnect_every: o.reconnect_every }),
                io: s.io.kind,
                read_route: s.read_route.clone(),
            }
        })
        .collect()
}

/// --rate-limiting RPS as memtier paces it: (requests per tick, tick in ns). Ticks are at
/// most 50 a second; a tick's requests are RPS / 50 rounded up, and the ticks per second
/// the whole number of those that fits in RPS (so 7 → 1 every 142.857 ms, 120 → 3 every 25 ms).
pub fn rate_ticks(rate: u32) -> (u32, u64) {
    let per_tick = rate.div_ceil(50).max(1);
    let ticks = (rate / per_tick).max(1);
    (per_tick, (1_000_000 / u64::from(ticks)) * 1000)
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The engine over one plan per thread: merged stats.
fn engine(o: &MtOptions, s: &Setup) -> Result<Merged, String> {
    let plans = plans(o, s);
    let barrier = Barrier::new(plans.len());
    let parts: Vec<stats::ThreadStats> = std::thread::scope(|sc| {
        let handles: Vec<_> = plans.iter().map(|p| sc.spawn(|| worker::run(p, &barrier))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if parts.len() != plans.len() {
        return Err("a worker thread failed".into());
    }
    Ok(stats::merge(parts, 3))
}

/// (clients per thread, results) of each step of a staircase run.
type Steps = Vec<(usize, StepResult)>;

/// A staircase run (`crate::workload::staircase`): each step on the engine with that step's clients
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
    eprint!("{}", crate::workload::staircase::table(&steps_only));
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
    if m.undrained > 0 {
        eprintln!("WARNING: {} requests in flight at the end of --test-time got no reply within {} s of it; not counted", m.undrained, worker::DRAIN_LIMIT_NS / 1_000_000_000);
    }
    if m.errors.total() > 0 {
        let e = &m.errors;
        eprintln!("WARNING: {} error replies (err={} moved={} ask={} other={}); not counted as ops", e.total(), e.err, e.moved, e.ask, e.other);
        if let Some(first) = &m.first_error {
            eprintln!("WARNING: first error reply: {first}");
        }
    }
    Ok((m, start, finish, steps))
}

fn write_file(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))
}

/// Runs -x times and writes every output.
pub fn run(o: &MtOptions, io: IoUsed) -> Result<(), String> {
    let s = setup(o, io)?;
    if o.requests == super::options::Requests::AllKeys {
        println!("setting requests to {}", o.requests_per_client().unwrap_or(0));
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
    let sections = report::sections(o, &summaries);
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
        let name = describe(o);
        let n = merged.len();
        let results: Vec<TestResult> = merged
            .into_iter()
            .enumerate()
            .map(|(i, m)| TestResult::new(&s.kv, if n > 1 { format!("{name} (run {})", i + 1) } else { name.clone() }, m))
            .collect();
        write_file(path, &crate::report::json(&s.kv, &s.io, &results))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::event_loop::IoKind;
    use crate::frontend::memtier::options::parse;

    fn opts(args: &[&str]) -> MtOptions {
        match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()) {
            Ok(MtParsed::Run(o)) => *o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kvload_options_mirror_memtier() {
        let o = opts(&["-c", "3", "-t", "2", "-n", "7", "-a", "bob:pw", "--select-db", "2", "--pipeline", "4", "-d", "9"]);
        let k = kv_options(&o);
        assert_eq!((k.clients, k.threads, k.requests, k.pipeline, k.data_size, k.dbnum), (6, 2, 42, 4, 9, 2));
        assert_eq!((k.user.as_deref(), k.password.as_deref()), (Some("bob"), Some("pw")));
        assert_eq!(credentials(":a:b"), (None, "a:b".to_string()));
        assert_eq!(credentials("pw"), (None, "pw".to_string()));
        let k = kv_options(&opts(&["--test-time", "2"]));
        assert_eq!(k.duration, Some(2.0));
    }

    #[test]
    fn plans_split_clients_and_quotas() {
        let o = opts(&["-c", "3", "-t", "2", "-n", "5", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "600"]);
        let s = Setup {
            kv: kv_options(&o),
            connect: ConnectSpec { tls: None, prefix: Vec::new(), prefix_replies: 0 },
            endpoints: vec![Endpoint::Tcp("127.0.0.1".into(), 1)],
            slots: vec![Vec::new()],
            read_route: None,
            program: Arc::new(Program::new(&o)),
            seed: 0,
            io: IoUsed { kind: IoKind::Epoll, note: None },
        };
        let p = plans(&o, &s);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].conns.iter().map(|c| c.1).collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!(p[1].quota, Some(15));
        let mt = p[1].memtier.as_ref().expect("memtier plan");
        assert_eq!(mt.client_quota, Some(5));
        assert_eq!(mt.clients.len(), 3);
        assert_eq!((mt.clients[0].keys.min, mt.clients[0].keys.max), (101, 200));
    }

    #[test]
    fn rate_ticks_are_memtiers() {
        assert_eq!(rate_ticks(1), (1, 1_000_000_000));
        assert_eq!(rate_ticks(7), (1, 142_857_000));
        assert_eq!(rate_ticks(50), (1, 20_000_000));
        assert_eq!(rate_ticks(100), (2, 20_000_000));
        assert_eq!(rate_ticks(120), (3, 25_000_000));
        assert_eq!(rate_ticks(10_000), (200, 20_000_000));
    }

    #[test]
    fn cluster_clients_connect_to_every_primary() {
        let o = opts(&["-c", "3", "-t", "2", "-n", "5", "--cluster-mode"]);
        let s = Setup {
            kv: kv_options(&o),
            connect: ConnectSpec { tls: None, prefix: Vec::new(), prefix_replies: 0 },
            endpoints: (1..=3).map(|p| Endpoint::Tcp("127.0.0.1".into(), p)).collect(),
            slots: vec![Vec::new(); 3],
            read_route: None,
            program: Arc::new(Program::new(&o)),
            seed: 0,
            io: IoUsed { kind: IoKind::Epoll, note: None },
        };
        let p = plans(&o, &s);
        assert_eq!(p[1].conns, [(0, 1), (1, 1), (2, 1), (0, 3), (1, 3), (2, 3), (0, 5), (1, 5), (2, 5)]);
        let mt = p[1].memtier.as_ref().expect("memtier plan");
        assert_eq!(mt.conn_client, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert_eq!((mt.clients.len(), mt.client_quota, p[1].quota), (3, Some(5), Some(15)));
    }
}
