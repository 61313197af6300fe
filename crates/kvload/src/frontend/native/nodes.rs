//! nodes: the servers of a run — the seed, or a cluster's primaries (with the --fallback
//! nodes or the replicas a failover may promote), with --read-from-replicas the shards
//! and their replicas, and per test the nodes its connections go to; the server's
//! configuration lines of the text report.

use crate::base::resp::{encode_args, Value};
use crate::base::session::connect_spec;
use crate::base::transport::{self, ConnectSpec, Endpoint};
use crate::workload::replicas::{self, Nodes, ReadFrom, Shard};
use crate::workload::spec::Spec;
use crate::workload::topology::{topology, Seed};

use super::options::Options;

/// The servers of a run and how to connect to them.
pub struct Servers {
    pub connect: ConnectSpec,
    pub endpoints: Vec<Endpoint>,
    pub slots: Vec<Vec<u16>>,
    /// --read-from-replicas: the primaries with their replicas (empty: not asked for).
    pub shards: Vec<Shard>,
}

impl Servers {
    /// Connects to the seed (PING) and, in cluster mode, reads its slot map.
    pub fn discover(o: &Options) -> Result<Servers, String> {
        let connect = connect_spec(&o.session())?;
        let endpoint = match &o.socket {
            Some(s) => Endpoint::Unix(s.clone()),
            None => Endpoint::Tcp(o.host.clone(), o.port),
        };
        let seed = Seed {
            endpoint,
            cluster: o.cluster,
            fallback: o.reconnect().map_or(&[][..], |r| &r.fallback),
            replicas: o.reconnect().is_some(),
            clients: o.clients,
            print: !o.csv && !o.quiet,
        };
        let (endpoints, slots) = topology(&seed, &connect)?;
        Ok(Servers { connect, endpoints, slots, shards: Vec::new() })
    }

    /// The shards read tests may go to (--read-from-replicas): CLUSTER NODES' replicas in
    /// cluster mode, else the primary's online replicas from INFO replication.
    pub fn find_replicas(&mut self, o: &Options) -> Result<(), String> {
        if o.read_from == ReadFrom::No {
            return Ok(());
        }
        let seed = &self.endpoints[0];
        if o.cluster {
            let reply = transport::command(seed, &self.connect, &encode_args(&[b"CLUSTER", b"NODES"]))?;
            self.shards = replicas::shards_from_nodes(&reply.as_text().unwrap_or_default())?;
            return Ok(());
        }
        let info = transport::command(seed, &self.connect, &encode_args(&[b"INFO", b"replication"]))?;
        let text = info.as_text().unwrap_or_default();
        self.shards = vec![Shard { primary: seed.clone(), replicas: replicas::standalone_replicas(&text), slots: Vec::new() }];
        Ok(())
    }

    /// `host configuration "save": ...` lines as valkey-benchmark prints them (best effort).
    pub fn config_lines(&self, o: &Options) -> Vec<String> {
        if o.csv || o.quiet {
            return Vec::new();
        }
        if o.cluster {
            return vec![format!("cluster mode: yes ({} primaries)", self.endpoints.len())];
        }
        let ep = &self.endpoints[0];
        let mut out = Vec::new();
        for name in ["save", "appendonly"] {
            if let Ok(Value::Array(v)) = transport::command(ep, &self.connect, &encode_args(&[b"CONFIG", b"GET", name.as_bytes()])) {
                if let Some(val) = v.get(1).and_then(Value::as_text) {
                    out.push(format!("host configuration \"{name}\": {val}"));
                }
            }
        }
        out
    }

    /// The endpoints of one test: the primaries, or for a read test the replicas the
    /// --read-from-replicas mode picks.
    pub fn test_nodes(&self, o: &Options, spec: &Spec) -> Result<Nodes, String> {
        if self.shards.is_empty() {
            return Ok(Nodes { endpoints: self.endpoints.clone(), slots: self.slots.clone(), route: None });
        }
        let read = self.is_read(spec)?;
        replicas::select(&self.shards, o.read_from, read, o.cluster, &self.connect)
    }

    /// True when the server flags every command of the spec `readonly` (COMMAND INFO).
    fn is_read(&self, spec: &Spec) -> Result<bool, String> {
        for cmd in &spec.commands {
            let Some(name) = cmd.first() else { continue };
            let info = transport::command(&self.endpoints[0], &self.connect, &encode_args(&[b"COMMAND", b"INFO", name]))?;
            if !replicas::flagged_readonly(&info) {
                return Ok(false);
            }
        }
        Ok(!spec.commands.is_empty())
    }
}
