//! plan: a memtier run's options compiled into the engine's plans — how connections start
//! (memtier's credentials, RESP2/3), the nodes (cluster primaries; replicas and the
//! reads' routing with --read-preference), and per thread its memtier clients, a
//! connection per client (per client and primary in cluster mode), their -n and rate.

use std::convert::Infallible;
use std::sync::Arc;

use crate::base::event_loop::IoUsed;
use crate::base::resp::encode_args;
use crate::base::rng::default_seed;
use crate::base::session::{connect_spec, Session};
use crate::base::transport::{ConnectSpec, Endpoint};
use crate::engine::plan::{Plan, Requests, WindowPlan, DRAIN_ALL_NS, DRAIN_LIMIT_NS};
use crate::engine::route::{ReadRoute, Route};
use crate::report::RunInfo;
use crate::workload::topology::{topology, Seed};

use super::options::{MtOptions, Protocol};
use super::program::Program;
use super::read_pref::{self, ReadPref};

/// A thread's plan of a memtier run: windows of the program's requests.
pub type MtPlan = Plan<Infallible, Program>;

/// What every plan (and every run of -x) of a memtier run shares.
pub struct Setup {
    /// The run as kvload's JSON report describes it.
    pub info: RunInfo,
    pub connect: ConnectSpec,
    pub endpoints: Vec<Endpoint>,
    pub slots: Vec<Vec<u16>>,
    /// --read-preference / --read-server: endpoints are primaries then replicas, every
    /// request routed by its slot (as in cluster mode) and reads to replicas.
    pub read_route: Option<Arc<ReadRoute>>,
    pub program: Arc<Program>,
    /// Seed of every client (plus its index with --distinct-client-seed).
    pub seed: u64,
    pub io: IoUsed,
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

/// How connections start: TLS, AUTH, SELECT, HELLO 3 (or 2 with `--protocol resp2`).
fn connect(o: &MtOptions) -> Result<ConnectSpec, String> {
    let (user, password) = match o.auth.as_deref().map(credentials) {
        Some((u, p)) => (u, Some(p)),
        None => (None, None),
    };
    let session = Session {
        tls: &o.tls,
        host: &o.host,
        user: user.as_deref(),
        password: password.as_deref(),
        tracking: false,
        dbnum: o.select_db,
        cluster: o.cluster_mode,
        resp3: o.protocol == Protocol::Resp3,
    };
    let mut connect = connect_spec(&session)?;
    if o.protocol == Protocol::Resp2 {
        connect.prefix.extend(encode_args(&[b"HELLO", b"2"]));
        connect.prefix_replies += 1;
    }
    Ok(connect)
}

/// The run as kvload's JSON report describes it (`--kvload-json`).
pub fn run_info(o: &MtOptions) -> RunInfo {
    let clients = o.clients * o.threads;
    RunInfo {
        host: o.host.clone(),
        port: o.port,
        socket: o.socket.clone(),
        clients,
        threads: o.threads,
        pipeline: o.pipeline,
        requests: o.requests_per_client().map_or(0, |n| n * clients as u64),
        duration: o.test_time.map(|t| t as f64),
        data_size: o.data_max(),
        dbnum: o.select_db,
        resp3: o.protocol == Protocol::Resp3,
        tls: o.tls.enabled,
        cluster: o.cluster_mode,
        quiet: true,
        tests: vec![o.describe()],
        ..RunInfo::default()
    }
}

/// Connects (PING, the cluster's slot map, with --read-preference the replicas and which
/// commands are reads) and builds the program.
pub fn setup(o: &MtOptions, io: IoUsed) -> Result<Setup, String> {
    let connect = connect(o)?;
    let endpoint = match &o.socket {
        Some(s) => Endpoint::Unix(s.clone()),
        None => Endpoint::Tcp(o.host.clone(), o.port),
    };
    // memtier needs no client per primary: each client connects to every one of them
    let seed = Seed { endpoint, cluster: o.cluster_mode, fallback: &[], replicas: false, clients: usize::MAX, print: false };
    let (mut endpoints, mut slots) = topology(&seed, &connect)?;
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
    let mut info = run_info(o);
    if o.cluster_mode || read_route.is_some() {
        info.clients *= endpoints.len(); // kvload's JSON counts connections
    }
    let seed = if o.randomize { default_seed() } else { 0 };
    Ok(Setup { info, connect, endpoints, slots, read_route, program: Arc::new(program), seed, io })
}

/// One plan per thread: thread k has the memtier clients g ≡ k (mod threads), client
/// g with its P slice and, with --distinct-client-seed, its seed; a connection per
/// client, or in cluster mode a connection per client and primary (as memtier).
pub fn plans(o: &MtOptions, s: &Setup) -> Vec<MtPlan> {
    (0..o.threads).map(|t| thread_plan(o, s, t)).collect()
}

/// Thread `t`'s plan.
fn thread_plan(o: &MtOptions, s: &Setup, t: usize) -> MtPlan {
    let threads = o.threads;
    let total = (o.clients * threads) as u64;
    let routed = o.cluster_mode || s.read_route.is_some();
    let nodes = if routed { s.endpoints.len() } else { 1 };
    let per_client = o.requests_per_client();
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
    let window = WindowPlan {
        source: s.program.clone(),
        clients,
        conn_client,
        client_quota: per_client,
        per_tick: o.rate.map(|r| rate_ticks(r).0),
        connect_jitter_us: o.connect_jitter_us,
        reconnect_every: o.reconnect_every,
    };
    Plan {
        endpoints: s.endpoints.clone(),
        conns,
        total_clients: total as usize,
        connect: s.connect.clone(),
        pipeline: o.pipeline,
        quota: per_client.map(|n| n * ids.len() as u64),
        // --time-limit caps a request-bound run: whichever of its -n or the time comes first
        duration_ns: o.test_time.or(o.time_limit).map(|d| d * 1_000_000_000),
        drain_ns: if o.time_limit.is_some() { DRAIN_ALL_NS } else { DRAIN_LIMIT_NS },
        warmup_ns: 0,
        interval_ns: o.rate.map(|r| rate_ticks(r).1),
        // memtier's rate limit is a grid of ticks: no Poisson arrivals to draw
        poisson: false,
        arrivals_seed: 0,
        slots: s.slots.clone(),
        route: if routed { Route::Sampled } else { Route::RoundRobin },
        keepalive: true,
        sigfig: 3,
        reconnect_ns: None,
        ack_log: false,
        io: s.io.kind,
        read_route: s.read_route.clone(),
        requests: Requests::Window(window),
    }
}

/// --rate-limiting RPS as memtier paces it: (requests per tick, tick in ns). Ticks are at
/// most 50 a second; a tick's requests are RPS / 50 rounded up, and the ticks per second
/// the whole number of those that fits in RPS (so 7 → 1 every 142.857 ms, 120 → 3 every 25 ms).
pub fn rate_ticks(rate: u32) -> (u32, u64) {
    let per_tick = rate.div_ceil(50).max(1);
    let ticks = (rate / per_tick).max(1);
    (per_tick, (1_000_000 / u64::from(ticks)) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::event_loop::IoKind;
    use crate::frontend::memtier::options::{parse, MtParsed};

    fn opts(args: &[&str]) -> MtOptions {
        match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()) {
            Ok(MtParsed::Run(o)) => *o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kvloads_report_mirrors_memtier() {
        let o = opts(&["-c", "3", "-t", "2", "-n", "7", "-a", "bob:pw", "--select-db", "2", "--pipeline", "4", "-d", "9"]);
        let k = run_info(&o);
        assert_eq!((k.clients, k.threads, k.requests, k.pipeline, k.data_size, k.dbnum), (6, 2, 42, 4, 9, 2));
        assert_eq!(credentials("bob:pw"), (Some("bob".to_string()), "pw".to_string()));
        assert_eq!(credentials(":a:b"), (None, "a:b".to_string()));
        assert_eq!(credentials("pw"), (None, "pw".to_string()));
        let k = run_info(&opts(&["--test-time", "2"]));
        assert_eq!(k.duration, Some(2.0));
        let c = connect(&o).expect("no TLS to set up");
        assert!(c.prefix.starts_with(b"*3\r\n$4\r\nAUTH\r\n$3\r\nbob\r\n$2\r\npw\r\n") && c.prefix_replies == 2, "AUTH, SELECT");
    }

    #[test]
    fn plans_split_clients_and_quotas() {
        let o = opts(&["-c", "3", "-t", "2", "-n", "5", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "600"]);
        let s = Setup {
            info: run_info(&o),
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
        let mt = p[1].window().expect("a window plan");
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
            info: run_info(&o),
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
        let mt = p[1].window().expect("a window plan");
        assert_eq!(mt.conn_client, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert_eq!((mt.clients.len(), mt.client_quota, p[1].quota), (3, Some(5), Some(15)));
    }
}
