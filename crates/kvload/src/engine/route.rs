//! route: how a thread's connections reach the nodes — the routing of keys (`Route`), the
//! slot → node table kept up to date with MOVED, and a read test's shards (`ReadRoute`).

use crate::base::slots::SLOTS;
use crate::base::transport::ConnectSpec;

/// `owner_table` entry of a slot no primary serves.
pub const NO_NODE: u16 = u16::MAX;

/// Slot → index of the primary serving it (NO_NODE if none).
pub fn owner_table(slots: &[Vec<u16>]) -> Vec<u16> {
    let mut owner = vec![NO_NODE; SLOTS];
    for (n, list) in slots.iter().enumerate() {
        for &s in list {
            owner[s as usize] = n as u16;
        }
    }
    owner
}

/// How connections and keys are routed to the primaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Connections round-robin over the primaries (node = connection index mod
    /// primaries), keys sent as given; `{tag}` is patched per batch with a tag
    /// of the connection's node. Standalone mode, built-in tests, `{tag}` keys,
    /// keyless commands.
    RoundRobin,
    /// Fixed routing key (no `__rand_int__` in it): every connection goes to this node.
    Fixed(usize),
    /// Connections round-robin; the `__rand_int__` fields of the routing key are
    /// drawn until the key's slot belongs to the connection's node.
    Sampled,
}

/// The nodes of one test and how they map onto shards; READONLY is sent first on
/// connections to replicas in cluster mode (`readonly`, a copy of the connect spec).
#[derive(Clone)]
pub struct ReadRoute {
    /// Endpoint index → index of its shard.
    pub shard_of: Vec<usize>,
    /// Per shard: its slots (the slot-ownership table is built over shards).
    pub shard_slots: Vec<Vec<u16>>,
    /// Endpoint index → it is a replica.
    pub replica: Vec<bool>,
    /// The connect spec of replica connections (READONLY after the usual prefix).
    pub readonly: ConnectSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_slot_names_its_node() {
        let owner = owner_table(&[(0..10).collect(), (10..16384).collect()]);
        assert_eq!((owner[0], owner[9], owner[15], owner[16383]), (0, 0, 1, 1));
        assert_eq!(owner_table(&[vec![3]])[4], NO_NODE);
    }
}
