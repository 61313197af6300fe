//! memtier's `--read-preference` and `--read-server` (memtier_benchmark PR #456): where
//! reads go. `primary` (the default): every request to its slot's primary, as before.
//! `secondary`: a read (a command the server flags `readonly`: COMMAND INFO) to a replica
//! of its shard, in turn; a shard without one is an error (memtier's default fallback).
//! `secondaryPreferred`: a replica when the shard has one, else its primary. `nearest`
//! (lowest latency) is refused. Writes always go to the primary. In cluster mode the
//! shards come from CLUSTER NODES and a replica connection sends READONLY first;
//! standalone, `--read-server HOST:PORT` (repeatable) names the replicas.

use crate::base::resp::{encode_args, Value};
use crate::base::transport::{self, ConnectSpec, Endpoint};
use crate::engine::route::ReadRoute;
use crate::workload::replicas::{self, Shard};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPref {
    Primary,
    Secondary,
    SecondaryPreferred,
}

/// memtier's mode names (`nearest` is refused by the options table before this).
pub fn parse(v: &str) -> Result<ReadPref, String> {
    match v {
        "primary" => Ok(ReadPref::Primary),
        "secondary" => Ok(ReadPref::Secondary),
        "secondaryPreferred" => Ok(ReadPref::SecondaryPreferred),
        _ => Err(format!("invalid read-preference '{v}': primary, secondary or secondaryPreferred")),
    }
}

/// `HOST:PORT` of `--read-server`.
pub fn parse_server(v: &str) -> Result<(String, u16), String> {
    let bad = || format!("invalid read-server '{v}': HOST:PORT");
    let (host, port) = v.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// The routed topology of a run: endpoints (primaries first, index = shard, then the
/// replicas), each one's slots, the route onto shards, and per shard where reads go.
pub struct Routed {
    pub endpoints: Vec<Endpoint>,
    pub slots: Vec<Vec<u16>>,
    pub route: ReadRoute,
    pub read_nodes: Vec<Vec<usize>>,
}

/// Lays the shards out (pure): primaries at 0..S, replicas after them; `secondary` needs a
/// replica in every shard.
pub fn layout(shards: &[Shard], pref: ReadPref, cluster: bool, connect: &ConnectSpec) -> Result<Routed, String> {
    if pref == ReadPref::Secondary {
        if let Some(s) = shards.iter().find(|s| s.replicas.is_empty()) {
            return Err(format!("--read-preference secondary: primary {} has no replica", s.primary));
        }
    }
    let mut endpoints: Vec<Endpoint> = shards.iter().map(|s| s.primary.clone()).collect();
    let mut slots: Vec<Vec<u16>> = shards.iter().map(|s| s.slots.clone()).collect();
    let mut shard_of: Vec<usize> = (0..shards.len()).collect();
    let mut read_nodes = vec![Vec::new(); shards.len()];
    for (i, s) in shards.iter().enumerate() {
        for r in &s.replicas {
            read_nodes[i].push(endpoints.len());
            endpoints.push(r.clone());
            slots.push(s.slots.clone());
            shard_of.push(i);
        }
    }
    let replica = (0..endpoints.len()).map(|e| e >= shards.len()).collect();
    let mut readonly = connect.clone();
    if cluster {
        readonly.prefix.extend(encode_args(&[b"READONLY"]));
        readonly.prefix_replies += 1;
    }
    let route = ReadRoute { shard_of, shard_slots: shards.iter().map(|s| s.slots.clone()).collect(), replica, readonly };
    Ok(Routed { endpoints, slots, route, read_nodes })
}

/// The shards of a run: CLUSTER NODES in cluster mode, else the primary (owning every
/// slot, so each request's slot maps onto it) with the `--read-server`s.
pub fn shards(seed: &Endpoint, connect: &ConnectSpec, cluster: bool, servers: &[(String, u16)]) -> Result<Vec<Shard>, String> {
    if cluster {
        let reply = transport::command(seed, connect, &encode_args(&[b"CLUSTER", b"NODES"]))?;
        return replicas::shards_from_nodes(&reply.as_text().unwrap_or_default());
    }
    let replicas = servers.iter().map(|(h, p)| Endpoint::Tcp(h.clone(), *p)).collect();
    Ok(vec![Shard { primary: seed.clone(), replicas, slots: (0..crate::base::slots::SLOTS as u16).collect() }])
}

/// Per command name: the server flags it `readonly` (COMMAND INFO).
pub fn reads(seed: &Endpoint, connect: &ConnectSpec, names: &[Vec<u8>]) -> Result<Vec<bool>, String> {
    names
        .iter()
        .map(|n| {
            let info: Value = transport::command(seed, connect, &encode_args(&[b"COMMAND", b"INFO", n]))?;
            Ok(replicas::flagged_readonly(&info))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(p: u16) -> Endpoint {
        Endpoint::Tcp("127.0.0.1".into(), p)
    }

    #[test]
    fn modes_and_servers_parse() {
        assert_eq!(parse("secondaryPreferred"), Ok(ReadPref::SecondaryPreferred));
        assert!(parse("replica").is_err());
        assert_eq!(parse_server("127.0.0.1:7001"), Ok(("127.0.0.1".into(), 7001)));
        assert!(parse_server("7001").is_err() && parse_server("h:0").is_err());
    }

    #[test]
    fn layout_puts_primaries_first_and_reads_on_replicas() {
        let connect = ConnectSpec { tls: None, prefix: Vec::new(), prefix_replies: 0 };
        let shards = vec![Shard { primary: ep(1), replicas: vec![ep(3), ep(4)], slots: vec![0] }, Shard { primary: ep(2), replicas: vec![], slots: vec![1] }];
        let r = layout(&shards, ReadPref::SecondaryPreferred, true, &connect).unwrap();
        assert_eq!(r.endpoints, vec![ep(1), ep(2), ep(3), ep(4)]);
        assert_eq!((r.read_nodes, r.route.shard_of.clone()), (vec![vec![2, 3], vec![]], vec![0, 1, 0, 0]));
        assert_eq!(r.route.replica, vec![false, false, true, true]);
        assert_eq!(r.route.readonly.prefix_replies, 1);
        let refused = layout(&shards, ReadPref::Secondary, true, &connect).err().unwrap_or_default();
        assert!(refused.contains("127.0.0.1:2 has no replica"), "{refused}");
    }
}
