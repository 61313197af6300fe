//! replicas: `--read-from-replicas no|yes|all`, valkey-benchmark's `--rfr`: which nodes
//! a test's connections go to. A test whose every command the server flags `readonly`
//! (COMMAND INFO) is a read test: `yes` sends it to replicas only, `all` to primaries
//! and replicas; any other test goes to the primaries whatever the mode (a replica
//! refuses writes). In cluster mode the shards come from CLUSTER NODES (a replica serves
//! its primary's slots, after READONLY on each of its connections); standalone, the
//! replicas are the online ones INFO replication lists on the primary.

use crate::base::resp::{encode_args, Value};
use crate::base::transport::{ConnectSpec, Endpoint};
use crate::engine::route::ReadRoute;

/// Where read tests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    No,
    Yes,
    All,
}

/// `no|yes|all` (valkey-benchmark's words); anything else names the choices.
pub fn parse_read_from(v: &str) -> Result<ReadFrom, String> {
    match v {
        "no" => Ok(ReadFrom::No),
        "yes" => Ok(ReadFrom::Yes),
        "all" => Ok(ReadFrom::All),
        _ => Err(format!("invalid value for --read-from-replicas: '{v}' (no, yes or all)")),
    }
}

/// One primary, its replicas and its slots (no slots outside cluster mode).
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    pub primary: Endpoint,
    pub replicas: Vec<Endpoint>,
    pub slots: Vec<u16>,
}

/// A test's endpoints, their slots (a replica has its primary's) and, when replicas are
/// among them, the route that maps them onto shards.
pub struct Nodes {
    pub endpoints: Vec<Endpoint>,
    pub slots: Vec<Vec<u16>>,
    pub route: Option<ReadRoute>,
}

/// `ip:port@cport[,hostname]` of a CLUSTER NODES line.
fn node_endpoint(addr: &str) -> Option<Endpoint> {
    let (host, rest) = addr.split_once('@').map_or(addr, |(a, _)| a).rsplit_once(':').map(|(h, p)| (h, p.to_string()))?;
    Some(Endpoint::Tcp(host.to_string(), rest.parse().ok()?))
}

/// Slots of a primary's CLUSTER NODES line (`0-5460`, `5461`; migrating `[…]` skipped).
fn node_slots(fields: &[&str]) -> Vec<u16> {
    let mut slots = Vec::new();
    for f in fields.iter().filter(|f| !f.starts_with('[')) {
        let (a, b) = f.split_once('-').unwrap_or((f, f));
        if let (Ok(a), Ok(b)) = (a.parse::<u16>(), b.parse::<u16>()) {
            slots.extend(a..=b);
        }
    }
    slots
}

/// Shards from CLUSTER NODES: each primary with slots, and the replicas that name it
/// (failed nodes left out). Not CLUSTER SLOTS: it lists a replica only once a primary has
/// heard of its replication offset, which an idle cluster gossips seconds after the sync.
pub fn shards_from_nodes(text: &str) -> Result<Vec<Shard>, String> {
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).filter(|f: &Vec<&str>| f.len() >= 8).collect();
    let failed = |f: &Vec<&str>| f[2].split(',').any(|x| x == "fail" || x == "fail?" || x == "noaddr");
    let mut shards: Vec<(String, Shard)> = Vec::new();
    for f in lines.iter().filter(|f| f[2].contains("master") && !failed(f)) {
        let slots = node_slots(&f[8..]);
        let primary = node_endpoint(f[1]).ok_or_else(|| format!("unexpected CLUSTER NODES address {}", f[1]))?;
        if !slots.is_empty() {
            shards.push((f[0].to_string(), Shard { primary, replicas: Vec::new(), slots }));
        }
    }
    for f in lines.iter().filter(|f| f[2].contains("slave") && !failed(f)) {
        if let (Some((_, shard)), Some(ep)) = (shards.iter_mut().find(|(id, _)| id == f[3]), node_endpoint(f[1])) {
            shard.replicas.push(ep);
        }
    }
    if shards.is_empty() {
        return Err("cluster has no slots assigned".into());
    }
    Ok(shards.into_iter().map(|(_, s)| s).collect())
}

/// The online replicas an INFO replication text of a primary lists
/// (`slave0:ip=127.0.0.1,port=6380,state=online,…`).
pub fn standalone_replicas(info: &str) -> Vec<Endpoint> {
    info.lines()
        .filter(|l| l.starts_with("slave") && l.contains(':'))
        .filter_map(|l| {
            let fields = l.split_once(':')?.1;
            let get = |k: &str| fields.split(',').find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='));
            if get("state")? != "online" {
                return None;
            }
            Some(Endpoint::Tcp(get("ip")?.to_string(), get("port")?.parse().ok()?))
        })
        .collect()
}

/// True when the COMMAND INFO reply of one command flags it `readonly`.
pub fn flagged_readonly(info: &Value) -> bool {
    let Value::Array(outer) = info else { return false };
    let Some(Value::Array(cmd)) = outer.first() else { return false };
    match cmd.get(2) {
        Some(Value::Array(flags)) => flags.iter().any(|f| f.as_text().as_deref() == Some("readonly")),
        _ => false,
    }
}

/// The endpoints of a test. Primaries (no route) unless it is a read test and the mode
/// asks for replicas; then every shard must have a replica (else the error says which).
pub fn select(shards: &[Shard], from: ReadFrom, read: bool, cluster: bool, connect: &ConnectSpec) -> Result<Nodes, String> {
    let primaries = || Nodes { endpoints: shards.iter().map(|s| s.primary.clone()).collect(), slots: shards.iter().map(|s| s.slots.clone()).collect(), route: None };
    if from == ReadFrom::No || !read {
        return Ok(primaries());
    }
    if let Some(s) = shards.iter().find(|s| s.replicas.is_empty()) {
        return Err(format!("--read-from-replicas: primary {} has no replica (INFO replication / CLUSTER NODES list none online)", s.primary));
    }
    let mut nodes = Nodes { endpoints: Vec::new(), slots: Vec::new(), route: None };
    let mut shard_of = Vec::new();
    let mut replica = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let members = s.replicas.iter().map(|r| (r, true));
        let chosen: Vec<(&Endpoint, bool)> = if from == ReadFrom::All { std::iter::once((&s.primary, false)).chain(members).collect() } else { members.collect() };
        for (ep, is_replica) in chosen {
            nodes.endpoints.push(ep.clone());
            nodes.slots.push(s.slots.clone());
            shard_of.push(i);
            replica.push(is_replica);
        }
    }
    let mut readonly = connect.clone();
    if cluster {
        readonly.prefix.extend(encode_args(&[b"READONLY"]));
        readonly.prefix_replies += 1;
    }
    nodes.route = Some(ReadRoute { shard_of, shard_slots: shards.iter().map(|s| s.slots.clone()).collect(), replica, readonly });
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(p: u16) -> Endpoint {
        Endpoint::Tcp("127.0.0.1".into(), p)
    }

    fn spec() -> ConnectSpec {
        ConnectSpec { tls: None, prefix: Vec::new(), prefix_replies: 0 }
    }

    #[test]
    fn modes_parse_and_bad_values_name_the_choices() {
        assert_eq!(parse_read_from("all"), Ok(ReadFrom::All));
        assert!(parse_read_from("replicas").unwrap_err().contains("no, yes or all"));
    }

    #[test]
    fn cluster_nodes_give_shards_with_replicas() {
        let text = "a 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-9 20\n\
b 127.0.0.1:7001@17001,host master - 0 0 2 connected 10-19 21-16383 [22->-x]\n\
c 127.0.0.1:7003@17003 slave a 0 0 1 connected\n\
d 127.0.0.1:7004@17004 slave b 0 0 2 connected\n\
e 127.0.0.1:7005@17005 slave,fail b 0 0 2 disconnected\n\
f 127.0.0.1:7006@17006 slave b 0 0 2 connected\n";
        let s = shards_from_nodes(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].primary.clone(), s[0].replicas.clone(), s[0].slots.len()), (ep(7000), vec![ep(7003)], 11));
        assert_eq!((s[1].replicas.clone(), s[1].slots.len()), (vec![ep(7004), ep(7006)], 16384 - 11));
        assert!(shards_from_nodes("").is_err());
    }

    #[test]
    fn modes_choose_nodes_for_reads_only() {
        let shards = vec![Shard { primary: ep(1), replicas: vec![ep(2)], slots: vec![0] }, Shard { primary: ep(3), replicas: vec![ep(4), ep(5)], slots: vec![1] }];
        let yes = select(&shards, ReadFrom::Yes, true, true, &spec()).unwrap();
        assert_eq!(yes.endpoints, vec![ep(2), ep(4), ep(5)]);
        let route = yes.route.unwrap();
        assert_eq!((route.shard_of, route.replica), (vec![0, 1, 1], vec![true, true, true]));
        assert!(route.readonly.prefix.ends_with(b"READONLY\r\n") && route.readonly.prefix_replies == 1);
        let all = select(&shards, ReadFrom::All, true, false, &spec()).unwrap();
        assert_eq!(all.endpoints, vec![ep(1), ep(2), ep(3), ep(4), ep(5)]);
        assert!(all.route.unwrap().readonly.prefix.is_empty(), "standalone replicas need no READONLY");
        let writes = select(&shards, ReadFrom::Yes, false, true, &spec()).unwrap();
        assert_eq!((writes.endpoints, writes.route.is_none()), (vec![ep(1), ep(3)], true));
        let lonely = vec![Shard { primary: ep(1), replicas: vec![], slots: vec![] }];
        assert!(select(&lonely, ReadFrom::All, true, false, &spec()).is_err());
    }

    #[test]
    fn info_and_command_flags() {
        let info = "role:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1,port=7001,state=online,offset=5,lag=0\r\nslave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n";
        assert_eq!(standalone_replicas(info), vec![ep(7001)]);
        let get = Value::Array(vec![Value::Array(vec![Value::Bulk(b"get".to_vec()), Value::Int(2), Value::Array(vec![Value::Simple("readonly".into()), Value::Simple("fast".into())])])]);
        let set = Value::Array(vec![Value::Array(vec![Value::Bulk(b"set".to_vec()), Value::Int(-3), Value::Array(vec![Value::Simple("write".into())])])]);
        assert!(flagged_readonly(&get) && !flagged_readonly(&set) && !flagged_readonly(&Value::Nil));
    }
}
