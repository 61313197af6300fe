//! sample: the one home of kvload's random distributions, shared by every front end —
//! Zipf (rejection-inversion), the standard normal, and the key distributions of kvload's
//! own mode (`--key-distribution`: uniform, sequential, zipf, gaussian, hotset). memtier's
//! key patterns draw their Zipf and Gaussian keys here too. No allocation per draw.

use crate::base::rng::Rng;

/// Uniform in [0, 1) from 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// Zipf sampler constants (rejection-inversion, Hörmann & Derflinger, ACM TOMACS 6(3) 1996).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zipf {
    lo: f64,
    hi: f64,
    exp: f64,
    h_lo: f64,
    h_hi: f64,
    s: f64,
}

impl Zipf {
    /// Over [max(min, 1), max(max, that)] with exponent `exp` (0 < exp < 5; ~1 uses logs).
    pub fn new(min: u64, max: u64, exp: f64) -> Zipf {
        let lo = min.max(1) as f64;
        let hi = (max as f64).max(lo);
        let mut z = Zipf { lo, hi, exp, h_lo: 0.0, h_hi: 0.0, s: 0.0 };
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

    /// One draw; `p` yields uniform numbers in [0, 1].
    pub fn sample(&self, mut p: impl FnMut() -> f64) -> u64 {
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
#[derive(Debug, Clone, Copy, PartialEq)]
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
            KeyDist::Zipf(z) => z.sample(|| unit(rng)) - 1,
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
