//! plan: a test's options compiled into the engine's plans, one per thread — connections
//! spread over the threads and nodes, each thread's share of -n, its key generator and the
//! open loop's interval. Pure: nothing is connected or sent.

use std::convert::Infallible;
use std::sync::Arc;

use crate::base::event_loop::IoKind;
use crate::base::schedule;
use crate::base::transport::ConnectSpec;
use crate::engine::plan::{Plan, Requests, DRAIN_LIMIT_NS};
use crate::engine::route::{ReadRoute, Route};
use crate::workload::batches::TemplateBatches;
use crate::workload::cluster::plan_route;
use crate::workload::keys::KeyGen;
use crate::workload::replicas::Nodes;

use super::options::Options;

/// A thread's plan of kvload's own runs: batches of a template.
pub type NativePlan = Plan<TemplateBatches, Infallible>;

/// What the plans of every test of a run share.
pub struct Common<'a> {
    pub connect: &'a ConnectSpec,
    /// The run's seed (each thread's generator is seeded from it).
    pub seed: u64,
    pub io: IoKind,
}

/// One test: its requests, its nodes and how its keys reach them.
struct Test<'a> {
    batches: &'a TemplateBatches,
    nodes: &'a Nodes,
    route: Route,
    read_route: Option<Arc<ReadRoute>>,
}

/// One plan per thread for a test of `batches` on `nodes`.
pub fn plans(o: &Options, c: &Common, nodes: &Nodes, batches: &TemplateBatches) -> Vec<NativePlan> {
    let route = plan_route(o.cluster, &batches.template, &nodes.slots);
    let test = Test { batches, nodes, route, read_route: nodes.route.clone().map(Arc::new) };
    let conns = spread(o, nodes, route);
    let quotas = quotas(o, &conns);
    conns.into_iter().zip(quotas).enumerate().map(|(t, (conns, quota))| thread_plan(o, c, &test, t, conns, quota)).collect()
}

/// Per thread, its connections: (node, global connection index), round-robin.
fn spread(o: &Options, nodes: &Nodes, route: Route) -> Vec<Vec<(usize, usize)>> {
    let mut conns: Vec<Vec<(usize, usize)>> = vec![Vec::new(); o.threads];
    for g in 0..o.clients {
        let node = match route {
            Route::Fixed(n) => fixed_node(nodes, n, g),
            // Reconnecting standalone: every connection starts at the seed (the rest of
            // the endpoints are its --fallback nodes).
            _ if !o.cluster && o.reconnect().is_some() => 0,
            // Reconnecting in a cluster: the replicas listed after the primaries wait.
            _ if o.cluster && o.reconnect().is_some() => g % serving(&nodes.slots),
            _ => g % nodes.endpoints.len(),
        };
        conns[g % o.threads].push((node, g));
    }
    conns
}

/// Per thread, its share of -n (in proportion to its connections); None with --duration.
fn quotas(o: &Options, conns: &[Vec<(usize, usize)>]) -> Vec<Option<u64>> {
    let mut assigned = 0u64;
    let mut before = 0usize;
    conns
        .iter()
        .map(|c| {
            before += c.len();
            o.duration.is_none().then(|| {
                let upto = o.requests * before as u64 / o.clients as u64;
                let q = upto - assigned;
                assigned = upto;
                q
            })
        })
        .collect()
}

/// Thread `t`'s plan: its connections and its share of -n.
fn thread_plan(o: &Options, c: &Common, test: &Test, t: usize, conns: Vec<(usize, usize)>, quota: Option<u64>) -> NativePlan {
    let Test { batches, nodes, route, .. } = *test;
    let per_batch = o.pipeline * batches.template.ncmds;
    let seed = c.seed ^ (t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // With --dataset the generator picks rows (in order with --sequential).
    let range = batches.dataset.as_ref().map_or(o.keyspace.unwrap_or(0), |d| d.ds.rows() as u64);
    let keys = KeyGen::new(seed, range, o.sequential, t as u64, o.threads as u64).with_shape(o.key_shape);
    Plan {
        endpoints: nodes.endpoints.clone(),
        conns,
        total_clients: o.clients,
        connect: c.connect.clone(),
        pipeline: o.pipeline,
        quota,
        duration_ns: o.duration.map(|d| (d * 1e9) as u64),
        drain_ns: DRAIN_LIMIT_NS,
        warmup_ns: (o.warmup * 1e9) as u64,
        interval_ns: o.rps.map(|r| schedule::batch_interval_ns(r, o.clients, per_batch)),
        poisson: o.poisson,
        arrivals_seed: keys.rng.clone().next(),
        slots: nodes.slots.clone(),
        route,
        keepalive: o.keepalive,
        sigfig: o.precision,
        reconnect_ns: o.reconnect().map(|r| r.backoff_ms * 1_000_000),
        ack_log: o.reconnect_opts.ack_log.is_some(),
        io: c.io,
        read_route: test.read_route.clone(),
        requests: Requests::Batches { source: batches.clone(), keys },
    }
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
