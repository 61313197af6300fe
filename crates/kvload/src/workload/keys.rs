//! keys: `__rand_int__` values (drawn from a `workload::sample` distribution, or
//! sequential per lane in cluster mode) and the in-place patching of request buffers
//! (digits, routed keys, `{tag}`).

use crate::base::rng::Rng;
use crate::base::slots::key_slot;
use crate::workload::sample::{KeyDist, KeyShape, Normal};
use crate::workload::spec::{Template, MAX_OCC};

/// Produces `__rand_int__` values: drawn in 0..n (uniform unless `with_shape` says),
/// or sequential (start, start+step, ...) mod n.
#[derive(Debug, Clone)]
pub struct KeyGen {
    pub rng: Rng,
    n: u64,
    sequential: bool,
    dist: KeyDist,
    normal: Normal,
    counter: u64,
    step: u64,
    /// Cluster key routing with --sequential: one cursor per primary, each
    /// walking this generator's sequence (start, start+step, ...) on its own.
    lanes: Vec<u64>,
}

impl KeyGen {
    pub fn new(seed: u64, n: u64, sequential: bool, start: u64, step: u64) -> Self {
        let dist = if sequential { KeyDist::Sequential } else { KeyDist::Uniform };
        KeyGen { rng: Rng::new(seed), n, sequential, dist, normal: Normal::default(), counter: start, step: step.max(1), lanes: Vec::new() }
    }

    /// The same generator drawing from `shape` over its n keys (`--key-distribution`).
    pub fn with_shape(mut self, shape: KeyShape) -> Self {
        self.dist = shape.over(self.n);
        self.sequential = self.dist == KeyDist::Sequential;
        self
    }

    /// A failover moved lane `from`'s slots to lane `to`: `to` goes on from where `from`
    /// got (--sequential keys stay unique; a no-op without lanes).
    pub fn carry_lane(&mut self, from: usize, to: usize) {
        if let (Some(&at), true) = (self.lanes.get(from), to < self.lanes.len()) {
            self.lanes[to] = self.lanes[to].max(at);
        }
    }

    /// Gives the generator `n` sequential cursors (lanes) for `next_lane`.
    pub fn set_lanes(&mut self, n: usize) {
        self.lanes = vec![self.counter; n];
    }

    /// Next value of lane `l`: sequential mode advances that lane's cursor,
    /// random mode draws from the shared RNG.
    #[inline]
    pub fn next_lane(&mut self, l: usize) -> u64 {
        if self.n == 0 {
            return 0;
        }
        if self.sequential {
            let c = &mut self.lanes[l];
            let v = *c % self.n;
            *c = c.wrapping_add(self.step);
            v
        } else {
            self.dist.draw(&mut self.rng, &mut self.normal, self.n)
        }
    }

    #[inline]
    pub fn next(&mut self) -> u64 {
        if self.n == 0 {
            return 0;
        }
        if matches!(self.dist, KeyDist::Uniform) {
            // the default, inlined here (the other shapes call `draw`)
            return self.rng.below(self.n);
        }
        if self.sequential {
            let v = self.counter % self.n;
            self.counter = self.counter.wrapping_add(self.step);
            v
        } else {
            self.dist.draw(&mut self.rng, &mut self.normal, self.n)
        }
    }
}

const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Overwrites the 12-byte field at `at` with `v` zero-padded to 12 digits
/// (values ≥ 10^12 keep their low 12 digits).
#[inline]
pub fn write_digits(buf: &mut [u8], at: usize, mut v: u64) {
    let field = &mut buf[at..at + 12];
    for pair in field.chunks_exact_mut(2).rev() {
        let d = (v % 100) as usize * 2;
        v /= 100;
        pair.copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
}

/// Patches the `__rand_int__` fields of `count` consecutive template instances in `buf`.
#[inline]
pub fn patch_rand(buf: &mut [u8], t: &Template, count: usize, keys: &mut KeyGen) {
    if t.rand.is_empty() {
        return;
    }
    let len = t.bytes.len();
    if let ([(off, 0)], 1) = (&t.rand[..], t.nocc) {
        // one field (SET key:__rand_int__ ...): one draw per instance, straight in
        for i in 0..count {
            write_digits(buf, i * len + *off as usize, keys.next());
        }
        return;
    }
    let mut vals = [0u64; MAX_OCC];
    for i in 0..count {
        for v in vals.iter_mut().take(t.nocc) {
            *v = keys.next();
        }
        let base = i * len;
        for &(off, occ) in &t.rand {
            write_digits(buf, base + off as usize, vals[occ as usize]);
        }
    }
}

/// Cluster key routing: like `patch_rand`, but the values of the `__rand_int__`
/// fields inside the template's routing key are redrawn (from lane `node`) until
/// the key's slot is owned by `node` in `owner` (slot → node index), at most
/// `max_tries` draws per instance; after that the last draw is sent as is (and
/// will come back MOVED). Other fields sharing an occurrence index with a key
/// field get the accepted value. Allocation-free. Returns the instances that gave up.
#[inline]
pub fn patch_rand_routed(buf: &mut [u8], t: &Template, count: usize, keys: &mut KeyGen, owner: &[u16], node: usize, max_tries: u32) -> usize {
    let Some((koff, klen)) = t.key else {
        patch_rand(buf, t, count, keys);
        return 0;
    };
    let (koff, klen) = (koff as usize, klen as usize);
    let len = t.bytes.len();
    let key_fields = &t.rand[t.key_rand.clone()];
    let mut vals = [0u64; MAX_OCC];
    let mut gave_up = 0;
    for i in 0..count {
        for v in vals.iter_mut().take(t.nocc) {
            *v = keys.next_lane(node);
        }
        let base = i * len;
        let mut tries = 1;
        loop {
            for &(off, occ) in key_fields {
                write_digits(buf, base + off as usize, vals[occ as usize]);
            }
            let slot = key_slot(&buf[base + koff..base + koff + klen]) as usize;
            if owner[slot] as usize == node {
                break;
            }
            if tries >= max_tries {
                gave_up += 1;
                break;
            }
            tries += 1;
            for &(_, occ) in key_fields {
                vals[occ as usize] = keys.next_lane(node);
            }
        }
        for &(off, occ) in &t.rand {
            write_digits(buf, base + off as usize, vals[occ as usize]);
        }
    }
    gave_up
}

/// Writes the 3-byte hash tag into every `{tag}` field of `count` instances (`{abc}`).
#[inline]
pub fn patch_tags(buf: &mut [u8], t: &Template, count: usize, tag: &[u8; 3]) {
    let len = t.bytes.len();
    for i in 0..count {
        for &off in &t.tags {
            let at = i * len + off as usize + 1;
            buf[at..at + 3].copy_from_slice(tag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::{encode, Spec};

    #[test]
    fn digits() {
        let mut b = *b"xx__rand_int__yy";
        write_digits(&mut b, 2, 42);
        assert_eq!(&b, b"xx000000000042yy");
        write_digits(&mut b, 2, 999_999_999_999);
        assert_eq!(&b, b"xx999999999999yy");
        write_digits(&mut b, 2, 123_456_789_012);
        assert_eq!(&b, b"xx123456789012yy");
        write_digits(&mut b, 2, 1_000_000_000_007);
        assert_eq!(&b, b"xx000000000007yy");
    }

    #[test]
    fn seeded_sequences_repeat() {
        let mut a = KeyGen::new(7, 1000, false, 0, 1);
        let mut b = KeyGen::new(7, 1000, false, 0, 1);
        let va: Vec<u64> = (0..100).map(|_| a.next()).collect();
        let vb: Vec<u64> = (0..100).map(|_| b.next()).collect();
        assert_eq!(va, vb);
        assert!(va.iter().all(|&v| v < 1000));
        let mut s = KeyGen::new(1, 3, true, 1, 2);
        assert_eq!((0..4).map(|_| s.next()).collect::<Vec<_>>(), [1, 0, 2, 1]);
    }

    #[test]
    fn one_field_takes_one_draw_per_instance_in_order() {
        let t = encode(&crate::workload::spec::custom(&["SET k:__rand_int__ v".to_string()], 1).unwrap(), true, true).unwrap();
        assert_eq!((t.rand.len(), t.nocc), (1, 1));
        let mut buf = t.bytes.repeat(4);
        patch_rand(&mut buf, &t, 3, &mut KeyGen::new(9, 1_000_000, false, 0, 1));
        let mut same = KeyGen::new(9, 1_000_000, false, 0, 1);
        let want: Vec<String> = (0..3).map(|_| format!("k:{:012}", same.next())).collect();
        let text = String::from_utf8(buf).unwrap();
        let got: Vec<&str> = text.split("\r\n").filter(|w| w.starts_with("k:")).collect();
        assert_eq!(got[..3], want.iter().map(String::as_str).collect::<Vec<_>>()[..]);
        assert_eq!(got[3], "k:__rand_int__", "only `count` instances are patched");
    }

    #[test]
    fn uniform_draws_are_the_generators_below() {
        let mut keys = KeyGen::new(4, 777, false, 0, 1);
        let mut rng = Rng::new(4);
        assert!((0..100).all(|_| keys.next() == rng.below(777)));
    }

    #[test]
    fn patch_instances() {
        let s = Spec { name: "x".into(), commands: vec![
            vec![b"MSET".to_vec(), b"k:__rand_int__".to_vec(), b"v".to_vec(), b"k:__rand_int__".to_vec(), b"v".to_vec()],
            vec![b"GET".to_vec(), b"{tag}:k:__rand_int__".to_vec()],
        ] };
        let t = encode(&s, true, true).unwrap();
        let mut buf = t.bytes.repeat(2);
        let mut keys = KeyGen::new(0, 10, true, 3, 1);
        patch_rand(&mut buf, &t, 2, &mut keys);
        patch_tags(&mut buf, &t, 2, b"abc");
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("k:000000000003\r\n$1\r\nv\r\n$14\r\nk:000000000004"));
        assert!(text.contains("{abc}:k:000000000003"));
        assert!(text.contains("{abc}:k:000000000005"));
        assert!(!text.contains("__rand_int__"));
    }

    fn routed_keys(sequential: bool, line: &str, n: u64, owner: &[u16], node: usize, count: usize) -> (Vec<String>, usize) {
        let t = encode(&crate::workload::spec::custom(&[line.to_string()], 1).unwrap(), true, true).unwrap();
        let mut buf = t.bytes.repeat(count);
        let mut keys = KeyGen::new(3, n, sequential, 0, 1);
        keys.set_lanes(3);
        let gave_up = patch_rand_routed(&mut buf, &t, count, &mut keys, owner, node, 64 * 3);
        let text = String::from_utf8(buf).unwrap();
        let ks = text.split("\r\n").filter(|w| w.starts_with("a:")).map(str::to_string).collect();
        (ks, gave_up)
    }

    #[test]
    fn a_carried_lane_goes_on_where_the_other_got() {
        let mut keys = KeyGen::new(3, 1000, true, 0, 1);
        keys.set_lanes(4);
        let first: Vec<u64> = (0..5).map(|_| keys.next_lane(0)).collect();
        keys.carry_lane(0, 3);
        assert_eq!(keys.next_lane(3), 5, "after {first:?}, not over again");
        keys.carry_lane(1, 3); // a lane behind never moves it back
        assert_eq!(keys.next_lane(3), 6);
        keys.carry_lane(0, 9); // no such lane: nothing
    }

    #[test]
    fn routed_patching_stays_on_node() {
        let owner: Vec<u16> = (0..crate::base::slots::SLOTS).map(|s| (s * 3 / crate::base::slots::SLOTS) as u16).collect();
        let (ks, gave_up) = routed_keys(false, "SET a:__rand_int__ x ; GET a:__rand_int__", 1000, &owner, 1, 50);
        assert_eq!(gave_up, 0);
        assert_eq!(ks.len(), 100);
        for pair in ks.chunks(2) {
            assert_eq!(pair[0], pair[1], "a sequence shares its key");
            assert_eq!(owner[key_slot(pair[0].as_bytes()) as usize], 1);
        }
        // Sequential: lane 2 walks 0, 1, 2, ... keeping only its own keys, in order.
        let (ks, _) = routed_keys(true, "GET a:__rand_int__", 1000, &owner, 2, 20);
        let want: Vec<String> = (0..1000).map(|i| format!("a:{i:012}")).filter(|k| owner[key_slot(k.as_bytes()) as usize] == 2).take(20).collect();
        assert_eq!(ks, want);
        // No key of the keyspace on the node: give up after max_tries and send anyway.
        let none = vec![0u16; crate::base::slots::SLOTS];
        let (ks, gave_up) = routed_keys(false, "GET a:__rand_int__", 1000, &none, 1, 4);
        assert_eq!((ks.len(), gave_up), (4, 4));
    }
}
