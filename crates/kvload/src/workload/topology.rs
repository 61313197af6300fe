//! topology: the nodes a run's connections go to — the seed alone (with its --fallback
//! nodes), or a cluster's primaries and their slots from CLUSTER SLOTS (and, when
//! connections may fail over, the replicas CLUSTER NODES lists).

use crate::base::resp::{encode_args, Value};
use crate::base::slots;
use crate::base::transport::{self, ConnectSpec, Endpoint};
use crate::workload::replicas;

/// Where a run starts and how it uses the nodes.
pub struct Seed<'a> {
    pub endpoint: Endpoint,
    pub cluster: bool,
    /// Standalone --reconnect-on-error: the nodes after the seed (its --fallback).
    pub fallback: &'a [(String, u16)],
    /// Cluster --reconnect-on-error: the replicas too, serving no slot (one may take over).
    pub replicas: bool,
    /// Connections of the run: at least one per primary.
    pub clients: usize,
    /// Print the cluster's primaries, as valkey-benchmark does.
    pub print: bool,
}

/// Endpoints and per-node slot lists (one node, no slots, outside cluster mode).
pub fn topology(s: &Seed, cs: &ConnectSpec) -> Result<(Vec<Endpoint>, Vec<Vec<u16>>), String> {
    let seed = &s.endpoint;
    let pong = transport::command(seed, cs, &encode_args(&[b"PING"]))?;
    if let Value::Error(e) = pong {
        return Err(format!("Error from server {seed}: {e}"));
    }
    if !s.cluster {
        let mut eps = vec![seed.clone()];
        eps.extend(s.fallback.iter().map(|(h, p)| Endpoint::Tcp(h.clone(), *p)));
        let slots = vec![Vec::new(); eps.len()];
        return Ok((eps, slots));
    }
    let reply = transport::command(seed, cs, &encode_args(&[b"CLUSTER", b"SLOTS"]))?;
    let nodes = slots::nodes_from_slots(&reply).map_err(|e| format!("Failed to fetch cluster configuration from {seed}: {e}"))?;
    if s.clients < nodes.len() {
        return Err(format!("-c must be at least the number of primaries ({})", nodes.len()));
    }
    if s.print {
        println!("Cluster has {} primary nodes:\n", nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            println!("Primary {i}: {}:{}", n.host, n.port);
        }
        println!();
    }
    let mut eps: Vec<Endpoint> = nodes.iter().map(|n| Endpoint::Tcp(n.host.clone(), n.port)).collect();
    let mut slots: Vec<Vec<u16>> = nodes.into_iter().map(|n| n.slots).collect();
    if s.replicas {
        // CLUSTER NODES: CLUSTER SLOTS may not list them yet
        let text = transport::command(seed, cs, &encode_args(&[b"CLUSTER", b"NODES"]))?.as_text().unwrap_or_default();
        for r in replicas::shards_from_nodes(&text)?.into_iter().flat_map(|s| s.replicas) {
            if !eps.contains(&r) {
                eps.push(r);
                slots.push(Vec::new());
            }
        }
    }
    Ok((eps, slots))
}
