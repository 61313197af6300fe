//! cluster: what a test's keys do in cluster mode — a hash tag per slot for `{tag}` keys,
//! and how the template's routing key decides its connections' nodes (`Route`).

use crate::base::slots::{crc16, hashed_range, key_slot, SLOTS};
use crate::engine::route::Route;
use crate::workload::spec::{Template, RAND};

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

/// Chooses the routing of a template in cluster mode (`slots`: per primary).
pub fn plan_route(cluster: bool, t: &Template, slots: &[Vec<u16>]) -> Route {
    let Some((off, len)) = t.key.filter(|_| cluster) else { return Route::RoundRobin };
    let key = &t.bytes[off as usize..(off + len) as usize];
    // The slot varies only if a `__rand_int__` field lies in the hashed part
    // (patched digits never add or remove braces).
    let h = hashed_range(key);
    let varies = t.rand[t.key_rand.clone()].iter().any(|&(o, _)| {
        let at = (o - off) as usize;
        at < h.end && at + RAND.len() > h.start
    });
    if varies {
        return Route::Sampled;
    }
    let slot = key_slot(key);
    match slots.iter().position(|l| l.contains(&slot)) {
        Some(n) => Route::Fixed(n),
        None => Route::RoundRobin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_cover_all_slots() {
        let t = tag_table();
        for (slot, tag) in t.iter().enumerate() {
            let key = [b'k', b'{', tag[0], tag[1], tag[2], b'}', b'x'];
            assert_eq!(key_slot(&key) as usize, slot);
        }
    }

    #[test]
    fn routes() {
        use crate::workload::spec::{custom, encode};
        let slots = vec![(0..5461).collect::<Vec<u16>>(), (5461..10923).collect(), (10923..16384).collect()];
        let route = |line: &str, r: bool, cluster: bool| plan_route(cluster, &encode(&custom(&[line.to_string()], 1).unwrap(), r, cluster).unwrap(), &slots);
        // "foo" hashes to slot 12182 (third range); "x{foo}" by its hashtag.
        assert_eq!(route("LPOP foo", true, true), Route::Fixed(2));
        assert_eq!(route("GET x{foo}", true, true), Route::Fixed(2));
        assert_eq!(route("GET key:__rand_int__", true, true), Route::Sampled);
        let lit = slots.iter().position(|l| l.contains(&key_slot(b"key:__rand_int__"))).unwrap();
        assert_eq!(route("GET key:__rand_int__", false, true), Route::Fixed(lit));
        assert_eq!(route("GET key:{tag}:__rand_int__", true, true), Route::RoundRobin);
        assert_eq!(route("GET {foo}:__rand_int__", true, true), Route::Fixed(2));
        assert_eq!(route("GET {u__rand_int__}:x", true, true), Route::Sampled);
        assert_eq!(route("GET {}:__rand_int__", true, true), Route::Sampled);
        assert_eq!(route("PING", true, true), Route::RoundRobin);
        assert_eq!(route("LPOP foo", true, false), Route::RoundRobin);
    }
}
