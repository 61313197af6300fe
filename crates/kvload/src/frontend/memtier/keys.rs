//! memtier keys: key numbers per client by pattern (R, G, S, P, Z), as memtier's
//! object generator draws them. Each client (connection) owns a `ClientKeys`;
//! the shared `KeySpace` is immutable. No allocation after construction. Zipf and the
//! normal draws are `workload::sample`'s, the ones kvload's own mode uses.

use crate::base::rng::Rng;
use crate::workload::sample::{Normal, Zipf};

/// How a `--command` / `--key-pattern` letter draws key numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// R: uniform in [min, max].
    Random,
    /// G: gaussian around the median (default: middle of the range).
    Gaussian,
    /// S: sequential per client and command, min..max then wrap.
    Sequential,
    /// P: sequential over this client's slice of the range.
    Parallel,
    /// Z: zipf with `--key-zipf-exp` over [max(min, 1), max].
    Zipf,
}

impl Pattern {
    pub fn from_letter(c: char) -> Option<Pattern> {
        Some(match c {
            'R' => Pattern::Random,
            'G' => Pattern::Gaussian,
            'S' => Pattern::Sequential,
            'P' => Pattern::Parallel,
            'Z' => Pattern::Zipf,
            _ => return None,
        })
    }

    pub fn letter(self) -> char {
        match self {
            Pattern::Random => 'R',
            Pattern::Gaussian => 'G',
            Pattern::Sequential => 'S',
            Pattern::Parallel => 'P',
            Pattern::Zipf => 'Z',
        }
    }
}

/// The configured key range and distribution parameters (shared by all clients).
#[derive(Debug, Clone, PartialEq)]
pub struct KeySpace {
    pub min: u64,
    pub max: u64,
    /// 0 = memtier's default (range / 6).
    pub stddev: f64,
    /// 0 = memtier's default (middle of the range).
    pub median: f64,
    pub zipf: Zipf,
}

impl KeySpace {
    pub fn new(min: u64, max: u64, stddev: f64, median: f64, zipf_exp: f64) -> KeySpace {
        let exp = if zipf_exp > 0.0 { zipf_exp } else { 1.0 };
        KeySpace { min, max, stddev, median, zipf: Zipf::new(min, max, exp) }
    }
}

/// Client `index` of `total`'s slice of [min, max] for the P pattern: equal slices
/// of (max - min) / total + 1 keys; the last client takes the leftover.
pub fn parallel_range(min: u64, max: u64, index: u64, total: u64) -> (u64, u64) {
    let range = (max - min) / total.max(1) + 1;
    let lo = min.saturating_add(range.saturating_mul(index));
    let hi = if index + 1 == total { max } else { lo.saturating_add(range - 1) };
    (lo, hi)
}

/// One client's key state: its RNG, its range (a slice with P), and one
/// sequential cursor per iterator (per command, or SET/GET in ratio mode).
#[derive(Debug, Clone)]
pub struct ClientKeys {
    pub rng: Rng,
    normal: Normal,
    pub min: u64,
    pub max: u64,
    next: Vec<u64>,
}

impl ClientKeys {
    pub fn new(seed: u64, min: u64, max: u64, iterators: usize) -> ClientKeys {
        ClientKeys { rng: Rng::new(seed), normal: Normal::default(), min, max, next: vec![min; iterators] }
    }

    /// Uniform in [lo, hi].
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.rng.below(n),
            None => self.rng.next(),
        }
    }

    fn normal(&mut self) -> f64 {
        self.normal.next(&mut self.rng)
    }

    fn gaussian(&mut self, ks: &KeySpace) -> u64 {
        let (lo, hi) = (self.min, self.max);
        if lo == hi {
            return lo;
        }
        let len = (hi - lo) as f64;
        let median = if ks.median > 0.0 { ks.median } else { len / 2.0 + lo as f64 + 0.5 };
        let stddev = if ks.stddev > 0.0 { ks.stddev } else { len / 6.0 };
        loop {
            let v = self.normal() * stddev + median;
            if v >= lo as f64 && v <= hi as f64 + 1.0 {
                return (v as u64).min(hi);
            }
        }
    }

    /// Next key number of `pattern`; `iter` picks the sequential cursor (S, P).
    #[inline]
    pub fn next(&mut self, ks: &KeySpace, pattern: Pattern, iter: usize) -> u64 {
        match pattern {
            Pattern::Random => self.range(self.min, self.max),
            Pattern::Gaussian => self.gaussian(ks),
            Pattern::Zipf => ks.zipf.sample(|| self.rng.next()),
            Pattern::Sequential | Pattern::Parallel => {
                let c = &mut self.next[iter];
                if *c < self.min {
                    *c = self.min;
                }
                let k = *c;
                *c = if k >= self.max { self.min } else { k + 1 };
                k
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(p: Pattern, ks: &KeySpace, n: usize) -> Vec<u64> {
        let mut c = ClientKeys::new(7, ks.min, ks.max, 1);
        (0..n).map(|_| c.next(ks, p, 0)).collect()
    }

    #[test]
    fn uniform_covers_the_range_evenly() {
        let ks = KeySpace::new(1, 10, 0.0, 0.0, 0.0);
        let v = draws(Pattern::Random, &ks, 100_000);
        let mut count = [0u32; 11];
        v.iter().for_each(|&k| count[k as usize] += 1);
        assert_eq!(count[0], 0);
        for &c in &count[1..] {
            assert!((9_000..11_000).contains(&c), "{count:?}");
        }
    }

    #[test]
    fn gaussian_concentrates_around_the_middle() {
        let ks = KeySpace::new(0, 6000, 0.0, 0.0, 0.0);
        let v = draws(Pattern::Gaussian, &ks, 50_000);
        assert!(v.iter().all(|&k| k <= 6000));
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean - 3000.5).abs() < 30.0, "mean {mean}");
        // stddev = range / 6 = 1000: ~68% within one sigma.
        let within = v.iter().filter(|&&k| (2000..=4000).contains(&k)).count() as f64 / v.len() as f64;
        assert!((0.66..0.70).contains(&within), "{within}");
        let ks = KeySpace::new(0, 6000, 10.0, 100.0, 0.0);
        assert!(draws(Pattern::Gaussian, &ks, 1000).iter().all(|&k| (40..160).contains(&k)));
    }

    #[test]
    fn sequential_wraps_per_iterator() {
        let ks = KeySpace::new(3, 5, 0.0, 0.0, 0.0);
        let mut c = ClientKeys::new(0, 3, 5, 2);
        let a: Vec<u64> = (0..5).map(|_| c.next(&ks, Pattern::Sequential, 0)).collect();
        assert_eq!(a, [3, 4, 5, 3, 4]);
        assert_eq!(c.next(&ks, Pattern::Sequential, 1), 3);
    }

    #[test]
    fn parallel_slices_cover_the_range_once() {
        let mut all = Vec::new();
        for i in 0..3 {
            let (lo, hi) = parallel_range(1, 1000, i, 3);
            all.extend(lo..=hi);
        }
        assert_eq!(all, (1..=1000).collect::<Vec<_>>());
        assert_eq!(parallel_range(1, 1000, 0, 4), (1, 250));
        assert_eq!(parallel_range(1, 1000, 3, 4), (751, 1000));
    }

    #[test]
    fn zipf_is_skewed_towards_small_keys() {
        for exp in [0.5, 1.0, 1.5] {
            let ks = KeySpace::new(0, 10_000, 0.0, 0.0, exp);
            let v = draws(Pattern::Zipf, &ks, 100_000);
            assert!(v.iter().all(|&k| (1..=10_000).contains(&k)));
            let ones = v.iter().filter(|&&k| k == 1).count() as f64;
            let twos = v.iter().filter(|&&k| k == 2).count() as f64;
            // P(k) ∝ k^-exp: P(1)/P(2) = 2^exp.
            let ratio = ones / twos;
            assert!((ratio / 2f64.powf(exp) - 1.0).abs() < 0.1, "exp {exp}: ratio {ratio}");
            let low = v.iter().filter(|&&k| k <= 100).count();
            // Uniform would put 1% there.
            assert!(low > v.len() / 20, "exp {exp}: {low}");
        }
    }
}
