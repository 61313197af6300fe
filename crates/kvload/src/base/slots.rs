//! slots: Redis Cluster's side of the protocol — crc16 key slots (`{hashtag}` rules), the
//! primaries and their slots from a CLUSTER SLOTS reply, MOVED/ASK redirections.

use crate::base::resp::Value;

/// Slots of a cluster.
pub const SLOTS: usize = 16384;

const fn crc16_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            k += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
}

static CRC16_TABLE: [u16; 256] = crc16_table();

/// CRC16-CCITT (XMODEM), as used for cluster key slots (table-driven: it runs
/// for every draw of a slot-routed key).
#[inline]
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| (crc << 8) ^ CRC16_TABLE[((crc >> 8) as u8 ^ b) as usize])
}

/// Slot of a key, honouring `{hashtag}` rules.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(&key[hashed_range(key)]) % SLOTS as u16
}

/// The part of a key that is hashed: the first non-empty `{...}`, else all of it.
#[inline]
pub fn hashed_range(key: &[u8]) -> std::ops::Range<usize> {
    match key.iter().position(|&c| c == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&c| c == b'}') {
            Some(len) if len > 0 => open + 1..open + 1 + len,
            _ => 0..key.len(),
        },
        None => 0..key.len(),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub host: String,
    pub port: u16,
    pub slots: Vec<u16>,
}

/// Primaries and their slots, from a CLUSTER SLOTS reply.
pub fn nodes_from_slots(reply: &Value) -> Result<Vec<Node>, String> {
    let bad = || "unexpected CLUSTER SLOTS reply".to_string();
    let Value::Array(ranges) = reply else {
        return Err(match reply {
            Value::Error(e) => format!("CLUSTER SLOTS failed: {e}"),
            _ => bad(),
        });
    };
    let mut nodes: Vec<Node> = Vec::new();
    for r in ranges {
        let Value::Array(items) = r else { return Err(bad()) };
        let (from, to) = match (items.first().and_then(Value::as_int), items.get(1).and_then(Value::as_int)) {
            (Some(f), Some(t)) if f >= 0 && t < SLOTS as i64 && f <= t => (f as u16, t as u16),
            _ => return Err(bad()),
        };
        let Some(Value::Array(primary)) = items.get(2) else { return Err(bad()) };
        let host = primary.first().and_then(Value::as_text).ok_or_else(bad)?;
        let port = primary.get(1).and_then(Value::as_int).ok_or_else(bad)? as u16;
        let idx = match nodes.iter().position(|n| n.host == host && n.port == port) {
            Some(i) => i,
            None => {
                nodes.push(Node { host, port, slots: Vec::new() });
                nodes.len() - 1
            }
        };
        nodes[idx].slots.extend(from..=to);
    }
    if nodes.is_empty() {
        return Err("cluster has no slots assigned".into());
    }
    Ok(nodes)
}

/// Parses `MOVED <slot> <host>:<port>` / `ASK ...` into (slot, host, port).
pub fn parse_redirect(msg: &[u8]) -> Option<(u16, String, u16)> {
    let s = std::str::from_utf8(msg).ok()?;
    let mut it = s.split_whitespace();
    it.next()?;
    let slot: u16 = it.next()?.parse().ok()?;
    let (h, p) = it.next()?.rsplit_once(':')?;
    Some((slot, h.to_string(), p.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_vectors() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"{user1000}.followers"));
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % 16384);
        assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
    }

    #[test]
    fn slots_reply() {
        let node = |p: i64| Value::Array(vec![Value::Bulk(b"127.0.0.1".to_vec()), Value::Int(p), Value::Bulk(b"id".to_vec())]);
        let v = Value::Array(vec![
            Value::Array(vec![Value::Int(0), Value::Int(9), node(7000)]),
            Value::Array(vec![Value::Int(10), Value::Int(16383), node(7001)]),
            Value::Array(vec![Value::Int(20), Value::Int(21), node(7000)]),
        ]);
        let n = nodes_from_slots(&v).unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].slots.len(), 12);
        assert_eq!(n[1].port, 7001);
        assert_eq!(parse_redirect(b"MOVED 3999 127.0.0.1:6381"), Some((3999, "127.0.0.1".into(), 6381)));
    }
}
