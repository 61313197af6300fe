//! sample: the one home of kvload's random distributions, shared by every front end —
//! Zipf (an alias table, then geometric segments), the standard normal, and the key distributions of kvload's
//! own mode (`--key-distribution`: uniform, sequential, zipf, gaussian, hotset). memtier's
//! key patterns draw their Zipf and Gaussian keys here too. No allocation per draw.

use std::sync::Arc;

use crate::base::rng::Rng;

/// Uniform in [0, 1) from 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    bits_unit(rng.next())
}

/// Uniform in [0, 1) from the high 53 of 64 random bits.
#[inline]
fn bits_unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Zipf over [lo, hi]: P(k) ∝ k^-exp, exact, with no power on the common path.
///
/// The first `HEAD` keys come from an alias table (Walker, Vose: one lookup and one
/// branchless comparison, 4 bytes a key). The tail [lo + HEAD, hi] is cut into geometric
/// segments [f, l] over which the weight k^-exp falls by at most a factor 1 + ε
/// ((l/f)^exp ≤ 1 + ε); each segment is proposed with its ENVELOPE mass, (l − f + 1)·f^-exp,
/// from a second, small alias table, then a key k uniformly inside it (multiply-shift).
/// A second uniform v accepts k at once when v < (f/l)^exp (the segment's squeeze, a
/// constant: ≥ 1 − ε of the tail's draws stop there), else when v < (f/k)^exp (the one
/// power, in ≤ ε of them); a rejected key restarts the WHOLE draw.
///
/// Why that is exact: let w(k) = k^-exp, W the head's weight and E the tail's envelope
/// (Σ over segments of (l − f + 1)·f^-exp ≥ the tail's weight). One attempt proposes a head
/// key k with W/(W+E) · w(k)/W = w(k)/(W+E) and accepts it; a tail key k of segment [f, l]
/// with E/(W+E) · ((l − f + 1)·f^-exp / E) · 1/(l − f + 1) = f^-exp/(W+E) and accepts it with
/// (f/k)^exp, so with w(k)/(W+E) too. Every key's chance per attempt is w(k)/(W+E), and
/// restarting on a rejection (chance 1 − Σw/(W+E) ≤ ε·E/(W+E)) keeps those proportions:
/// P(k) = w(k)/Σw. What is left is rounding: the head's 19-bit and the segments' 32-bit alias
/// coins (2^-19 and 2^-32 of a slot's share: `head_table`),
/// the head's 64-bit draws (each slot and coin within 2^-32 of its share at s = 0.99), the tail's 53-bit uniforms, and the squeeze nudged down by 1e-15 so it never accepts what the exact
/// test would refuse. The segments are at most `SEGMENTS` (ε grows past 1% on the largest
/// key spaces, exactness does not change), so any key space costs `HEAD` + `SEGMENTS` powers
/// to set up and at most 32 KiB + 32 KiB.
#[derive(Debug, Clone, PartialEq)]
pub struct Zipf {
    lo: u64,
    /// W/(W+E): the head's share of one attempt (the tail's envelope takes the rest).
    head_mass: f64,
    /// head_mass·2^64: an attempt's 64 random bits r below it draw from the head, the
    /// others from the tail (u64::MAX when there is no tail).
    head_cut: u64,
    /// (r·head_mul) >> head_shift maps a head draw's r < head_cut onto [0, slots·2^19) in
    /// integers, one 128-bit multiplication: the slot in the high bits, the slot's coin in
    /// the low 19 (a float division on every draw cost ~4% of a request at P=16, float
    /// conversions ~1 ns more than this).
    head_mul: u64,
    head_shift: u32,
    /// The alias table of the head's keys, 4 bytes a slot: slot j keeps j when its
    /// coin (the draw's fraction, as 19 bits) is below the slot's share, else gives its
    /// alias (`head_table`). Shared by the threads' clones.
    slots: Arc<[u32]>,
    tail: Option<Tail>,
}

/// Keys drawn from their exact table before the segments take over (32 KiB at 4 bytes a
/// slot: the table fits the first-level data cache, 48 KiB a core here, where 64 KiB did
/// not and read ~1 point more per request at P=16; 512 KiB fell out of the second-level
/// cache between batches, a miss a draw inside kvload).
const HEAD: u64 = 1 << 13;

/// The weight's largest fall inside a tail segment while the segments are fewer than
/// `SEGMENTS`: ~1% of tail draws pay a power (and half of those are rejected).
const EPSILON: f64 = 0.01;

/// The most tail segments (32 bytes each): 10^9 keys at s = 0.99 need 1,170 at ε = 1%,
/// so there ε becomes 1.1%; at s = 5, 5.9%.
const SEGMENTS: f64 = 1024.0;

/// A tail segment [first, first + len − 1], one slot of the segments' alias table too
/// (slot j keeps segment j when its coin is below `keep`, else gives segment `alias`): a
/// kept draw reads one 32-byte record.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(32))]
struct Segment {
    keep: u32,
    alias: u32,
    first: u64,
    len: u64,
    /// (first / last)^exp, a hair under: below it a key is accepted without a power.
    squeeze: f64,
}

/// The tail past the head: its segments and the numbers that pick one.
#[derive(Debug, Clone, PartialEq)]
struct Tail {
    /// 1 / (2^64 − head_cut): maps an attempt's r ≥ head_cut onto [0, 1) — or 0 when the
    /// tail is so light (under 2^-11) that r has too few values left for a segment and its
    /// coin: then the tail draws a fresh uniform (s ≥ 2.3 or so, a draw in 10^10 or fewer).
    inv: f64,
    exp: f64,
    segs: Arc<[Segment]>,
}

/// Vose's alias table of `weights`: per slot (its own key's chance in 2^-32, its alias).
fn alias_table(weights: &[f64]) -> Arc<[(u32, u32)]> {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut prob: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
    let mut alias: Vec<u32> = (0..n as u32).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        alias[s] = l as u32;
        prob[l] -= 1.0 - prob[s];
        if prob[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    large.into_iter().chain(small).for_each(|i| prob[i] = 1.0);
    let coin = |p: f64| (p * 4_294_967_296.0).min(4_294_967_295.0) as u32;
    prob.iter().zip(alias).map(|(&p, a)| (if p >= 1.0 { u32::MAX } else { coin(p) }, a)).collect()
}

/// A head slot's alias in its low bits (the head has at most 2^13 keys), its own share in
/// 2^-19 in the high 19: 32 KiB for 8 Ki keys, half of (u32, u32) slots, so the table stays
/// in the first-level cache between batches more often. A full slot's alias is itself
/// (`head_table`).
const ALIAS_BITS: u32 = 13;
const COIN_BITS: u32 = 32 - ALIAS_BITS;

/// The head's alias table in integers, packed so: each key's weight in units of 2^-19 of a
/// slot, rounded so that they add up to exactly one slot a key (largest remainders), then
/// Vose's pairing in those units. The table then gives each key its rounded weight exactly:
/// within one unit, 2^-19 of a slot's share.
fn head_table(weights: &[f64]) -> Arc<[u32]> {
    let n = weights.len();
    debug_assert!(n > 0 && n <= 1 << ALIAS_BITS);
    let unit = 1i64 << COIN_BITS;
    let total: f64 = weights.iter().sum();
    let scale = (n as i64 * unit) as f64 / total;
    // largest remainders: each key's units rounded down, then one more to the keys whose
    // rounding lost the most until the units add up (so every key is within one unit)
    let x: Vec<f64> = weights.iter().map(|w| w * scale).collect();
    let mut q: Vec<i64> = x.iter().map(|v| v.floor() as i64).collect();
    let mut by_loss: Vec<usize> = (0..n).collect();
    by_loss.sort_by(|&a, &b| (x[b] - q[b] as f64).total_cmp(&(x[a] - q[a] as f64)));
    let short = n as i64 * unit - q.iter().sum::<i64>();
    for &i in by_loss.iter().cycle().take(short.unsigned_abs() as usize) {
        q[i] += short.signum();
    }
    let mut alias: Vec<u32> = (0..n as u32).collect();
    // a slot left whole keeps its key whatever the coin: its alias is itself
    let mut keep = vec![unit - 1; n];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| q[i] < unit);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        keep[s] = q[s];
        alias[s] = l as u32;
        q[l] -= unit - q[s];
        if q[l] < unit {
            large.pop();
            small.push(l);
        }
    }
    keep.iter().zip(alias).map(|(&k, a)| (k as u32) << ALIAS_BITS | a).collect()
}

/// A packed head slot as (its share in 2^-32, its alias).
#[cfg(test)]
fn unpack(slot: u32) -> (u32, u32) {
    (slot >> ALIAS_BITS << ALIAS_BITS, slot & ((1 << ALIAS_BITS) - 1))
}

/// The largest f64 below 1.
const ONE_BELOW: f64 = 1.0 - f64::EPSILON / 2.0;

/// (mul, shift) with (r·mul) >> shift in [0, slots·2^19) for every r below `cut` (≤ 2^64),
/// each value taken by ⌊cut / (slots·2^19)⌋ or one more of the r: mul = ⌊slots·2^(19+shift)
/// / cut⌋ with the largest shift ≤ 64 that keeps mul in 64 bits (64 unless the head's share
/// is under 2^-32: `Zipf::new` with s near 0 over an enormous key space).
fn head_map(slots: u128, cut: u128) -> (u64, u32) {
    let units = slots << COIN_BITS;
    let shift = (0..=64u32).rev().find(|&s| (units << s) / cut <= u64::MAX as u128).unwrap_or(0);
    (((units << shift) / cut) as u64, shift)
}

/// Slot `j` or its alias, by the coin, without a branch (the coin is a fair guess half the
/// time: a mispredicted branch).
#[inline]
fn pick(j: u64, coin: u64, (keep, alias): (u32, u32)) -> u64 {
    let mask = ((coin < keep as u64) as u64).wrapping_neg();
    alias as u64 ^ ((j ^ alias as u64) & mask)
}

impl Tail {
    /// Segments over [a, n] (a ≤ n) with their envelope masses; the envelope's sum.
    fn new(a: u64, n: u64, exp: f64, epsilon: f64) -> (Tail, f64) {
        // b_{i+1} ≥ b_i·r, so b_i ≥ a·r^i: at most ln(n/a)/ln r + 1 ≤ SEGMENTS segments.
        let cap = ((n as f64 + 1.0) / a as f64).powf(1.0 / SEGMENTS);
        let r = (1.0 + epsilon).powf(1.0 / exp).max(cap);
        let mut bounds = Vec::new();
        let mut b = a;
        loop {
            let last = ((b as f64 * r).floor() as u64).clamp(b, n);
            bounds.push((b, last));
            if last == n {
                break;
            }
            b = last + 1;
        }
        let weights: Vec<f64> = bounds.iter().map(|&(f, l)| (l - f + 1) as f64 * (f as f64).powf(-exp)).collect();
        let envelope: f64 = weights.iter().sum();
        let segs = bounds
            .iter()
            .zip(alias_table(&weights).iter())
            .map(|(&(f, l), &(keep, alias))| {
                let squeeze = (f as f64 / l as f64).powf(exp) * (1.0 - 1e-15);
                Segment { keep, alias, first: f, len: l - f + 1, squeeze }
            })
            .collect();
        (Tail { inv: 0.0, exp, segs }, envelope)
    }

    /// One attempt in the tail from a uniform `x` in [0, 1): a key, or None when the exact
    /// test rejects it (the caller restarts the whole draw).
    #[inline]
    fn attempt(&self, x: f64, mut p: impl FnMut() -> f64) -> Option<u64> {
        let x = x * self.segs.len() as f64;
        let j = (x as usize).min(self.segs.len() - 1);
        let coin = ((x - j as f64) * 4_294_967_296.0) as u64;
        let s = self.segs[j];
        let seg = &self.segs[pick(j as u64, coin, (s.keep, s.alias)) as usize];
        // 53 random bits times the length, the high part: uniform in 0..len (bias len/2^53)
        let bits = (p() * 9_007_199_254_740_992.0) as u64 as u128;
        let k = seg.first + ((bits * seg.len as u128) >> 53) as u64;
        let v = p();
        if v < seg.squeeze || v < (seg.first as f64 / k as f64).powf(self.exp) {
            Some(k)
        } else {
            None
        }
    }
}

impl Zipf {
    /// Over [max(min, 1), max(max, that)] with exponent `exp` (0 < exp < 5).
    pub fn new(min: u64, max: u64, exp: f64) -> Zipf {
        Zipf::with_epsilon(min, max, exp, EPSILON)
    }

    /// `new` with another bound on the weight's fall inside a tail segment.
    fn with_epsilon(min: u64, max: u64, exp: f64, epsilon: f64) -> Zipf {
        let lo = min.max(1);
        let hi = max.max(lo);
        let last = hi.min(lo + HEAD - 1);
        let head: Vec<f64> = (lo..=last).map(|k| (k as f64).powf(-exp)).collect();
        let weight: f64 = head.iter().sum();
        let (mut tail, envelope) = if last < hi {
            let (t, e) = Tail::new(last + 1, hi, exp, epsilon);
            (Some(t), e)
        } else {
            (None, 0.0)
        };
        let head_mass = weight / (weight + envelope);
        // `as` saturates: a head_mass of 1 − 2^-54 or more leaves no tail draw but r = u64::MAX
        let head_cut = if tail.is_some() { (head_mass * 18_446_744_073_709_551_616.0) as u64 } else { u64::MAX };
        if let Some(t) = tail.as_mut() {
            let rest = (u64::MAX - head_cut) as f64 + 1.0;
            t.inv = if 1.0 - head_mass < 1.0 / 2048.0 { 0.0 } else { 1.0 / rest };
        }
        let slots = head_table(&head);
        let (head_mul, head_shift) = head_map(slots.len() as u128, if tail.is_some() { head_cut as u128 } else { 1 << 64 });
        Zipf { lo, head_mass, head_cut, head_mul, head_shift, slots, tail }
    }

    /// One draw; `next` yields 64 uniform random bits.
    #[inline]
    pub fn sample(&self, mut next: impl FnMut() -> u64) -> u64 {
        loop {
            let r = next();
            if let Some(t) = self.tail.as_ref().filter(|_| r >= self.head_cut) {
                // (r − head_cut) is uniform below 2^64 − head_cut: onto [0, 1), kept below 1
                let x = if t.inv > 0.0 { ((r - self.head_cut) as f64 * t.inv).min(ONE_BELOW) } else { bits_unit(next()) };
                match t.attempt(x, || bits_unit(next())) {
                    Some(k) => return k,
                    None => continue,
                }
            }
            // r < head_cut is uniform below it: its slot, and the slot's 19-bit coin.
            let x = ((r as u128 * self.head_mul as u128) >> self.head_shift) as u64;
            let j = ((x >> COIN_BITS) as usize).min(self.slots.len() - 1);
            let coin = x & ((1 << COIN_BITS) - 1);
            let (keep, alias) = (self.slots[j] >> ALIAS_BITS, self.slots[j] & ((1 << ALIAS_BITS) - 1));
            return self.lo + pick(j as u64, coin, (keep, alias));
        }
    }
}

/// Standard normal draws by the Marsaglia polar method (the second of each pair kept).
#[derive(Debug, Clone, Default)]
pub struct Normal {
    spare: Option<f64>,
}

impl Normal {
    pub fn next(&mut self, rng: &mut Rng) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        loop {
            let u = unit(rng) * 2.0 - 1.0;
            let v = unit(rng) * 2.0 - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }
}

/// A key distribution as given (`--key-distribution`), before it knows the key count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyShape {
    Uniform,
    Sequential,
    /// P(rank k) ∝ k^-s; key 0 is the most drawn.
    Zipf(f64),
    /// Mean and deviation as fractions of the key space, truncated to it.
    Gaussian(f64, f64),
    /// A fraction of the keys (the first ones) taking a share of the draws.
    HotSet(f64, f64),
}

fn number(word: &str, what: &str, text: &str) -> Result<f64, String> {
    word.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("--key-distribution {text:?}: {what} {word:?} is not a number"))
}

fn within(v: f64, lo: f64, hi: f64, what: &str, text: &str) -> Result<f64, String> {
    if v > lo && v < hi {
        Ok(v)
    } else {
        Err(format!("--key-distribution {text:?}: {what} must be above {lo} and below {hi}, got {v}"))
    }
}

impl KeyShape {
    /// `uniform`, `sequential`, `zipf:S`, `gaussian:MEAN:SD`, `hotset:KEYS:SHARE`.
    pub fn parse(text: &str) -> Result<KeyShape, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let num = |i: usize, what: &str| number(parts[i], what, text);
        Ok(match (parts[0], parts.len()) {
            ("uniform", 1) => KeyShape::Uniform,
            ("sequential", 1) => KeyShape::Sequential,
            ("zipf", 2) => KeyShape::Zipf(within(num(1, "the exponent")?, 0.0, 5.0, "the exponent", text)?),
            ("gaussian", 3) => KeyShape::Gaussian(
                within(num(1, "the mean")?, -1e-12, 1.0 + 1e-12, "the mean", text)?,
                within(num(2, "the deviation")?, 0.0, 10.0, "the deviation", text)?,
            ),
            ("hotset", 3) => KeyShape::HotSet(
                within(num(1, "the hot keys' fraction")?, 0.0, 1.0, "the hot keys' fraction", text)?,
                within(num(2, "the hot keys' share")?, 0.0, 1.0 + 1e-12, "the hot keys' share", text)?,
            ),
            _ => return Err(format!("--key-distribution {text:?} is not one of uniform, sequential, zipf:S, gaussian:MEAN:SD, hotset:KEYS:SHARE")),
        })
    }

    /// The sampler over `n` keys (0..n).
    pub fn over(self, n: u64) -> KeyDist {
        let nf = n as f64;
        match self {
            KeyShape::Uniform => KeyDist::Uniform,
            KeyShape::Sequential => KeyDist::Sequential,
            KeyShape::Zipf(s) => KeyDist::Zipf(Zipf::new(1, n.max(1), s)),
            KeyShape::Gaussian(m, sd) => KeyDist::Gaussian { mean: m * nf, sd: sd * nf },
            KeyShape::HotSet(f, share) => {
                let hot = ((f * nf).round() as u64).clamp(1, n.max(1));
                KeyDist::HotSet { hot, share: (share * 2f64.powi(53)) as u64 }
            }
        }
    }
}

/// A key distribution over 0..n, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyDist {
    Uniform,
    Sequential,
    Zipf(Zipf),
    Gaussian { mean: f64, sd: f64 },
    /// Keys 0..hot draw `share` / 2^53 of the requests, uniformly; the rest the others.
    HotSet { hot: u64, share: u64 },
}

impl KeyDist {
    /// One key in 0..n (n > 0) for every distribution but `Sequential` (the caller's cursor).
    #[inline]
    pub fn draw(&self, rng: &mut Rng, normal: &mut Normal, n: u64) -> u64 {
        match *self {
            KeyDist::Uniform | KeyDist::Sequential => rng.below(n),
            KeyDist::Zipf(ref z) => z.sample(|| rng.next()) - 1,
            KeyDist::Gaussian { mean, sd } => loop {
                let v = normal.next(rng) * sd + mean;
                if v >= 0.0 && v < n as f64 {
                    return v as u64;
                }
            },
            KeyDist::HotSet { hot, share } => {
                if (rng.next() >> 11) < share || hot >= n {
                    rng.below(hot.min(n))
                } else {
                    hot + rng.below(n - hot)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(shape: &str, n: u64, draws: usize) -> Vec<u64> {
        let d = KeyShape::parse(shape).unwrap().over(n);
        let (mut rng, mut normal) = (Rng::new(11), Normal::default());
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[d.draw(&mut rng, &mut normal, n) as usize] += 1;
        }
        c
    }

    #[test]
    fn zipf_ranks_follow_the_power_law() {
        let c = counts("zipf:0.99", 10_000, 400_000);
        let ratio = c[0] as f64 / c[1] as f64;
        assert!((ratio / 2f64.powf(0.99) - 1.0).abs() < 0.08, "P(1)/P(2) {ratio}");
        // H(100, .99) / H(10000, .99) = 0.5178: the top 1% take ~52%.
        let top: u64 = c[..100].iter().sum();
        assert!((top as f64 / 400_000.0 - 0.5178).abs() < 0.005, "top 1% {top}");
    }

    /// Each key's chance as the tables give it: one attempt's chance of proposing and
    /// accepting it, over one attempt's chance of accepting any (rejections restart); and
    /// the rounding each may carry (2^-18 of its slot's share in the head: 19-bit coins; 2^-31
    /// in the tail's segments: 32-bit coins).
    fn law(z: &Zipf) -> Vec<(f64, f64)> {
        let slot_shares = |slots: &mut dyn Iterator<Item = (u32, u32)>, len: usize, mass: f64| {
            let mut got = vec![0.0; len];
            for (j, (keep, a)) in slots.enumerate() {
                let p = if keep == u32::MAX { 1.0 } else { keep as f64 / 4_294_967_296.0 };
                got[j] += p * mass / len as f64;
                got[a as usize] += (1.0 - p) * mass / len as f64;
            }
            got
        };
        let coin = 2f64.powi(-31);
        let head_slot = z.head_mass / z.slots.len() as f64 * 2f64.powi(1 - COIN_BITS as i32);
        let mut per_key: Vec<(f64, f64)> =
            slot_shares(&mut z.slots.iter().map(|&s| unpack(s)), z.slots.len(), z.head_mass).into_iter().map(|p| (p, head_slot)).collect();
        if let Some(t) = &z.tail {
            let segs = slot_shares(&mut t.segs.iter().map(|s| (s.keep, s.alias)), t.segs.len(), 1.0 - z.head_mass);
            for (s, share) in t.segs.iter().zip(segs) {
                let (f, slot) = (s.first as f64, (1.0 - z.head_mass) / t.segs.len() as f64 * coin / s.len as f64);
                per_key.extend((s.first..s.first + s.len).map(|k| (share / s.len as f64 * (f / k as f64).powf(t.exp), slot)));
            }
        }
        let total: f64 = per_key.iter().map(|p| p.0).sum();
        per_key.iter().map(|&(p, tol)| (p / total, tol / total)).collect()
    }

    /// Σ k^-s for k in a..=b: exact up to 10^5 terms, else Euler–Maclaurin from a ≥ 64
    /// (error far below 1e-12 of the sum).
    fn power_sum(a: u64, b: u64, s: f64) -> f64 {
        if b - a < 100_000 || a < 64 {
            return (a..=b).map(|k| (k as f64).powf(-s)).sum();
        }
        let (a, b) = (a as f64, b as f64);
        let f = |x: f64| x.powf(-s);
        let d1 = |x: f64| -s * x.powf(-s - 1.0);
        let d3 = |x: f64| -s * (s + 1.0) * (s + 2.0) * x.powf(-s - 3.0);
        let integral = if (s - 1.0).abs() < 1e-12 { b.ln() - a.ln() } else { (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s) };
        integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
    }

    fn assert_exact_law(z: &Zipf, n: u64, exp: f64) -> Result<(), String> {
        let want = power_sum(1, n, exp);
        for (i, &(g, tol)) in law(z).iter().enumerate() {
            let w = ((i + 1) as f64).powf(-exp) / want;
            // the coins (each head slot within 2^-19 of its share, each segment's within
            // 2^-32), 53-bit uniforms
            if (g - w).abs() > 1e-6 * w + tol + f64::EPSILON {
                return Err(format!("n {n} s {exp}: key {} has {g}, wants {w}", i + 1));
            }
        }
        Ok(())
    }

    #[test]
    fn zipf_tables_give_each_key_its_exact_weight() {
        for (n, exp) in [(400_000u64, 0.99), (100_000, 1.0), (300, 1.5), (40, 0.5), (8_193, 0.99), (200_000, 0.1), (60_000, 5.0)] {
            assert_exact_law(&Zipf::new(1, n, exp), n, exp).unwrap();
            // an envelope far above the weight (ε = 50%): exact all the same, through rejection
            assert_exact_law(&Zipf::with_epsilon(1, n, exp, 0.5), n, exp).unwrap();
        }
        let z = Zipf::new(1, 200_000, 0.5);
        let mut rng = Rng::new(3);
        let v: Vec<u64> = (0..400_000).map(|_| z.sample(|| rng.next())).collect();
        assert!(v.iter().all(|&k| (1..=200_000).contains(&k)));
        // Around the seam (keys 8192 | 8193) the counts follow k^-0.5 on both sides.
        let near = |lo: u64, hi: u64| v.iter().filter(|&&k| (lo..=hi).contains(&k)).count() as f64;
        let want = |lo: u64, hi: u64| power_sum(lo, hi, 0.5);
        let ratio = (near(4_193, 8_192) / near(8_193, 12_192)) / (want(4_193, 8_192) / want(8_193, 12_192));
        assert!((ratio - 1.0).abs() < 0.1, "{ratio}");
    }

    /// A key drawn from the tail alone (attempts until one is accepted): the tail's law
    /// given a tail key, which restarting the whole draw leaves as it is.
    fn tail_draw(z: &Zipf, rng: &mut Rng) -> u64 {
        let t = z.tail.as_ref().unwrap();
        loop {
            if let Some(k) = t.attempt(unit(rng), || unit(rng)) {
                return k;
            }
        }
    }

    /// Pearson's χ² of `draws` tail draws in bins of half a segment each (merged until each
    /// expects ≥ 20), against the exact sums; true when below df + 6·√(2·df) (p ≈ 1e-7).
    fn tail_fits(z: &Zipf, n: u64, exp: f64, draws: usize) -> Result<(), String> {
        let t = z.tail.as_ref().unwrap();
        let mut edges: Vec<u64> = t.segs.iter().flat_map(|s| [s.first, s.first + s.len / 2]).collect();
        edges.dedup();
        let total = power_sum(edges[0], n, exp);
        let mut rng = Rng::new(17);
        let mut got: Vec<u64> = (0..draws).map(|_| tail_draw(z, &mut rng)).collect();
        got.sort_unstable();
        let (mut chi, mut bins, mut o, mut e) = (0.0, 0usize, 0.0, 0.0);
        for (i, &a) in edges.iter().enumerate() {
            let b = edges.get(i + 1).map_or(n, |&x| x - 1);
            o += (got.partition_point(|&k| k <= b) - got.partition_point(|&k| k < a)) as f64;
            e += power_sum(a, b, exp) / total * draws as f64;
            if e >= 20.0 || i + 1 == edges.len() {
                chi += (o - e) * (o - e) / e;
                (bins, o, e) = (bins + 1, 0.0, 0.0);
            }
        }
        let df = (bins - 1) as f64;
        if chi < df + 6.0 * (2.0 * df).sqrt() {
            Ok(())
        } else {
            Err(format!("n {n} s {exp}: χ² {chi:.1} over {df} degrees of freedom"))
        }
    }

    #[test]
    fn zipf_tail_fits_the_power_law() {
        for (n, exp) in [(100_000u64, 0.99), (1_000_000_000, 0.99), (1_000_000_000, 1.0), (1_000_000_000, 0.1), (1_000_000_000, 1.5), (1_000_000_000, 5.0), (8_200, 0.99)] {
            tail_fits(&Zipf::new(1, n, exp), n, exp, 400_000).unwrap();
            // a coarse envelope: the exact test does most of the work
            tail_fits(&Zipf::with_epsilon(1, n, exp, 0.5), n, exp, 400_000).unwrap();
        }
    }

    #[test]
    fn zipf_head_takes_its_exact_share() {
        // 21% of draws past the head at s = 0.99 over 100k keys: within 4σ of the exact share
        let z = Zipf::new(1, 100_000, 0.99);
        let want = 1.0 - power_sum(1, HEAD, 0.99) / power_sum(1, 100_000, 0.99);
        let mut rng = Rng::new(23);
        let draws = 8_000_000;
        let tail = (0..draws).filter(|_| z.sample(|| rng.next()) > HEAD).count() as f64 / draws as f64;
        let sd = (want * (1.0 - want) / draws as f64).sqrt();
        assert!((tail - want).abs() < 4.0 * sd, "tail share {tail}, wants {want} ± {sd}");
    }

    proptest::proptest! {
        #![proptest_config(crate::base::fuzz::config())]

        #[test]
        fn any_zipf_gives_each_key_its_exact_weight(n in 1u64..30_000, exp in 0.1f64..5.0, eps in 0.001f64..1.0) {
            assert_exact_law(&Zipf::with_epsilon(1, n, exp, eps), n, exp).map_err(proptest::test_runner::TestCaseError::fail)?;
        }

        #[test]
        fn any_key_space_has_few_segments_covering_its_tail(min in 0u64..1_000, n in 0u64..(1 << 62), exp in 0.1f64..5.0) {
            let z = Zipf::new(min, n, exp);
            let (lo, hi) = (min.max(1), n.max(min.max(1)));
            if let Some(t) = &z.tail {
                proptest::prop_assert!(t.segs.len() as f64 <= SEGMENTS);
                let mut next = lo + HEAD;
                for s in t.segs.iter() {
                    proptest::prop_assert_eq!(s.first, next);
                    proptest::prop_assert!(s.len >= 1 && s.squeeze <= (s.first as f64 / (s.first + s.len - 1) as f64).powf(exp));
                    next = s.first + s.len;
                }
                proptest::prop_assert_eq!(next, hi + 1);
            } else {
                proptest::prop_assert!(hi - lo < HEAD);
            }
            let mut rng = Rng::new(n);
            for _ in 0..200 {
                let k = z.sample(|| rng.next());
                proptest::prop_assert!((lo..=hi).contains(&k), "{} outside [{}, {}]", k, lo, hi);
            }
        }
    }

    #[test]
    fn a_hot_set_takes_its_share() {
        let c = counts("hotset:0.01:0.9", 10_000, 200_000);
        let hot: u64 = c[..100].iter().sum();
        assert!((hot as f64 / 200_000.0 - 0.9).abs() < 0.005, "hot {hot}");
        assert!(c[100..].iter().all(|&x| x < 100), "the cold keys are uniform");
    }

    #[test]
    fn gaussian_keys_centre_on_the_mean() {
        let c = counts("gaussian:0.5:0.1", 1000, 100_000);
        let within: u64 = c[400..600].iter().sum();
        assert!((within as f64 / 100_000.0 - 0.6827).abs() < 0.01, "±1 sd {within}");
    }

    #[test]
    fn ill_formed_shapes_are_refused_by_name() {
        for bad in ["zipf", "zipf:x", "zipf:0", "gaussian:0.5", "hotset:1.5:0.9", "pareto:1", "uniform:1"] {
            let e = KeyShape::parse(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert_eq!(KeyShape::parse("hotset:0.01:0.9"), Ok(KeyShape::HotSet(0.01, 0.9)));
    }
    /// ns per draw in a tight loop (not a check: `cargo test --profile test-release --bin
    /// kvload -- --ignored --nocapture zipf_ns_per_draw`): the best of 40 runs of 250k draws
    /// each, the cases interleaved. "head"/"tail": s = 0.99 over 100k keys with every draw's
    /// first uniform sent to the head's or the tail's share of [0, 1).
    #[test]
    #[ignore]
    fn zipf_ns_per_draw() {
        let cases = [(100_000u64, 0.99, 0), (100_000, 0.99, 1), (100_000, 0.99, 2), (1_000_000_000, 0.99, 0), (100_000, 0.5, 0), (100_000, 1.5, 0)];
        let zipfs: Vec<Zipf> = cases.iter().map(|&(n, s, _)| Zipf::new(1, n, s)).collect();
        let mut best = vec![f64::MAX; cases.len()];
        let mut rng = Rng::new(5);
        for _ in 0..40 {
            for ((z, b), &(_, _, part)) in zipfs.iter().zip(best.iter_mut()).zip(&cases) {
                let h = z.head_cut as u128;
                let t = std::time::Instant::now();
                let mut acc = 0u64;
                for _ in 0..250_000 {
                    let mut first = part;
                    acc = acc.wrapping_add(z.sample(|| {
                        let x = rng.next();
                        let f = std::mem::replace(&mut first, 0);
                        [x, (x as u128 * h >> 64) as u64, (h + ((x as u128 * ((1 << 64) - h)) >> 64)) as u64][f]
                    }));
                }
                std::hint::black_box(acc);
                *b = b.min(t.elapsed().as_nanos() as f64 / 250_000.0);
            }
        }
        for ((n, s, part), b) in cases.iter().zip(best) {
            println!("zipf n={n} s={s} {}: {b:.2} ns/draw", ["all", "head", "tail"][*part]);
        }
    }
}
