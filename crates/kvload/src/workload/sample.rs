//! sample: the one home of kvload's random distributions, shared by every front end —
//! Zipf (rejection-inversion), the standard normal, and the key distributions of kvload's
//! own mode (`--key-distribution`: uniform, sequential, zipf, gaussian, hotset). memtier's
//! key patterns draw their Zipf and Gaussian keys here too. No allocation per draw.

use std::sync::Arc;

use crate::base::rng::Rng;

/// Uniform in [0, 1) from 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// Zipf over [lo, hi]: P(k) ∝ k^-exp. The first `HEAD` keys (where rejection-inversion
/// rejects most and pays three powers a draw) come from an alias table (Walker, Vose: one
/// lookup and one branchless comparison, 8 bytes a key); the rest from rejection-inversion over the tail, whose quick
/// acceptance takes nearly every draw there (one power). The tail's weight is summed by
/// Euler–Maclaurin, so a key space of any size costs `HEAD` powers to set up.
#[derive(Debug, Clone, PartialEq)]
pub struct Zipf {
    lo: u64,
    /// P(key < lo + HEAD): the share of draws the table serves.
    head_mass: f64,
    /// The alias table of the head's keys: slot j keeps j when its coin (the draw's
    /// fraction, as 32 bits) is below `.0`, else gives `.1`. Shared by the threads' clones.
    slots: Arc<[(u32, u32)]>,
    tail: Option<Inversion>,
}

/// Keys drawn from their exact table before rejection-inversion takes over (64 KiB: the
/// table stays in the second-level cache between batches; 512 KiB did not, and cost a
/// miss a draw inside kvload).
const HEAD: u64 = 1 << 13;

/// Σ k^-s for k in a..=b (a ≥ 2) by Euler–Maclaurin (error far below 1e-12 from a = 64).
fn power_sum(a: f64, b: f64, s: f64) -> f64 {
    let f = |x: f64| x.powf(-s);
    let d1 = |x: f64| -s * x.powf(-s - 1.0);
    let d3 = |x: f64| -s * (s + 1.0) * (s + 2.0) * x.powf(-s - 3.0);
    let integral = if (s - 1.0).abs() < 1e-9 { b.ln() - a.ln() } else { (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s) };
    integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
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

impl Zipf {
    /// Over [max(min, 1), max(max, that)] with exponent `exp` (0 < exp < 5).
    pub fn new(min: u64, max: u64, exp: f64) -> Zipf {
        let lo = min.max(1);
        let hi = max.max(lo);
        let last = hi.min(lo + HEAD - 1);
        let head: Vec<f64> = (lo..=last).map(|k| (k as f64).powf(-exp)).collect();
        let rest = if last < hi { power_sum((last + 1) as f64, hi as f64, exp) } else { 0.0 };
        let weight: f64 = head.iter().sum();
        let tail = (last < hi).then(|| Inversion::new(last + 1, hi, exp));
        Zipf { lo, head_mass: weight / (weight + rest), slots: alias_table(&head), tail }
    }

    /// One draw; `p` yields uniform numbers in [0, 1).
    #[inline]
    pub fn sample(&self, mut p: impl FnMut() -> f64) -> u64 {
        let u = p();
        if let Some(t) = self.tail.as_ref().filter(|_| u >= self.head_mass) {
            return t.sample(p);
        }
        // u / head_mass is uniform in [0, 1): its slot, and its fraction for the slot's coin.
        let x = u / self.head_mass * self.slots.len() as f64;
        let j = (x as usize).min(self.slots.len() - 1);
        let coin = ((x - j as f64) * 4_294_967_296.0) as u64;
        let (keep, alias) = self.slots[j];
        // without a branch: the coin is a fair guess half the time, a mispredicted branch
        let mask = ((coin < keep as u64) as u64).wrapping_neg();
        self.lo + (alias as u64 ^ ((j as u64 ^ alias as u64) & mask))
    }
}

/// Rejection-inversion constants (Hörmann & Derflinger, ACM TOMACS 6(3) 1996).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Inversion {
    lo: f64,
    hi: f64,
    exp: f64,
    h_lo: f64,
    h_hi: f64,
    s: f64,
}

impl Inversion {
    fn new(lo: u64, hi: u64, exp: f64) -> Inversion {
        let (lo, hi) = (lo as f64, hi as f64);
        let mut z = Inversion { lo, hi, exp, h_lo: 0.0, h_hi: 0.0, s: 0.0 };
        if z.is_log() {
            z.h_lo = (lo + 0.5).ln() - 1.0 / lo;
            z.h_hi = (hi + 0.5).ln();
            z.s = lo + 1.0 - ((lo + 1.5).ln() - 1.0 / (lo + 1.0)).exp();
        } else {
            let a = 1.0 - exp;
            z.h_lo = (lo + 0.5).powf(a) - a * lo.powf(-exp);
            z.h_hi = (hi + 0.5).powf(a);
            z.s = lo + 1.0 - ((lo + 1.5).powf(a) - a * (lo + 1.0).powf(-exp)).powf(1.0 / a);
        }
        z
    }

    fn is_log(&self) -> bool {
        (self.exp - 1.0).abs() < 1e-4
    }

    fn sample(&self, mut p: impl FnMut() -> f64) -> u64 {
        loop {
            let u = p() * (self.h_hi - self.h_lo) + self.h_lo;
            let mut x = if self.is_log() { u.exp() } else { u.powf(1.0 / (1.0 - self.exp)) };
            if x < self.lo - 0.5 {
                x = self.lo + 0.5;
            }
            if x >= self.hi + 0.5 {
                x = self.hi;
            }
            let k = (x + 0.5).floor();
            if k - x <= self.s {
                return k as u64;
            }
            let accept = if self.is_log() {
                u > (k + 0.5).ln() - 1.0 / k
            } else {
                let a = 1.0 - self.exp;
                (u - (k + 0.5).powf(a)) / a > -k.powf(-self.exp)
            };
            if accept {
                return k as u64;
            }
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
            KeyDist::Zipf(ref z) => z.sample(|| unit(rng)) - 1,
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

    #[test]
    fn zipf_head_and_tail_weigh_as_the_exact_sums() {
        for (n, exp) in [(400_000u64, 0.99), (100_000, 1.0), (300, 1.5), (40, 0.5)] {
            let z = Zipf::new(1, n, exp);
            let total: f64 = (1..=n).map(|k| (k as f64).powf(-exp)).sum();
            let head: Vec<f64> = (1..=n.min(HEAD)).map(|k| (k as f64).powf(-exp) / total).collect();
            assert!((z.head_mass - head.iter().sum::<f64>()).abs() < 1e-12, "{n} {exp}");
            // The alias table gives each head key its probability exactly.
            let mut got = vec![0.0; head.len()];
            for (j, &(keep, a)) in z.slots.iter().enumerate() {
                let p = if keep == u32::MAX { 1.0 } else { keep as f64 / 4_294_967_296.0 };
                got[j] += p * z.head_mass / head.len() as f64;
                got[a as usize] += (1.0 - p) * z.head_mass / head.len() as f64;
            }
            // 32-bit coins: each slot within 2^-32 of its share
            assert!(got.iter().zip(&head).all(|(g, w)| (g - w).abs() < 1e-6 * w), "{n} {exp}");
        }
        let z = Zipf::new(1, 200_000, 0.5);
        let mut rng = Rng::new(3);
        let v: Vec<u64> = (0..400_000).map(|_| z.sample(|| unit(&mut rng))).collect();
        assert!(v.iter().all(|&k| (1..=200_000).contains(&k)));
        // Around the seam (keys 8192 | 8193) the counts follow k^-0.5 on both sides.
        let near = |lo: u64, hi: u64| v.iter().filter(|&&k| (lo..=hi).contains(&k)).count() as f64;
        let want = |lo: u64, hi: u64| (lo..=hi).map(|k| (k as f64).powf(-0.5)).sum::<f64>();
        let ratio = (near(4_193, 8_192) / near(8_193, 12_192)) / (want(4_193, 8_192) / want(8_193, 12_192));
        assert!((ratio - 1.0).abs() < 0.1, "{ratio}");
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
}
