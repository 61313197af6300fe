//! cluster: crc16 key slots, per-slot hash tags, and the slot map from CLUSTER SLOTS.

use crate::resp::Value;

pub const SLOTS: usize = 16384;

/// CRC16-CCITT (XMODEM), as used for cluster key slots.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// Slot of a key, honouring `{hashtag}` rules.
#[allow(dead_code)]
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&c| c == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&c| c == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % SLOTS as u16
}

/// For every slot a 3-byte tag whose slot it is. Built by brute force over
/// printable ASCII (without braces); takes a few milliseconds.
pub fn tag_table() -> Vec<[u8; 3]> {
    let alphabet: Vec<u8> = (b'!'..=b'~').filter(|&c| c != b'{' && c != b'}').collect();
    let mut table = vec![[0u8; 3]; SLOTS];
    let mut filled = vec![false; SLOTS];
    let mut left = SLOTS;
    'outer: for &a in &alphabet {
        for &b in &alphabet {
            for &c in &alphabet {
                let tag = [a, b, c];
                let s = (crc16(&tag) as usize) % SLOTS;
                if !filled[s] {
                    filled[s] = true;
                    table[s] = tag;
                    left -= 1;
                    if left == 0 {
                        break 'outer;
                    }
                }
            }
        }
    }
    table
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
    fn tags_cover_all_slots() {
        let t = tag_table();
        for (slot, tag) in t.iter().enumerate() {
            let key = [b'k', b'{', tag[0], tag[1], tag[2], b'}', b'x'];
            assert_eq!(key_slot(&key) as usize, slot);
        }
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
