//! schedule: open-loop (wrk2-style) intended send times per connection.

/// Interval between batches on one connection: each connection carries
/// rps/clients requests per second, in batches of `per_batch` requests.
pub fn batch_interval_ns(rps: f64, clients: usize, per_batch: usize) -> u64 {
    let v = (clients as f64 * per_batch as f64) * 1e9 / rps;
    (v.round() as u64).max(1)
}

/// First intended send time of connection `idx` (of `clients`), staggered evenly.
pub fn first_due(t0: u64, interval: u64, idx: usize, clients: usize) -> u64 {
    t0 + ((interval as u128 * idx as u128) / clients.max(1) as u128) as u64
}

/// A Poisson process's gap (`--arrivals poisson`): an exponential draw of mean `mean` ns
/// from the uniform 64-bit `u` (inverse transform, capped at 40 means; at least 1 ns).
pub fn exp_gap_ns(mean: u64, u: u64) -> u64 {
    let unit = (u >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
    let draw = -(1.0 - unit).ln() * mean as f64;
    (draw.min(40.0 * mean as f64).round() as u64).max(1)
}

/// Number of batches scheduled in [from, end) on a grid of `interval` starting at `from`.
pub fn batches_between(from: u64, end: u64, interval: u64) -> u64 {
    if from >= end {
        0
    } else {
        (end - from).div_ceil(interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        // 2000 rps over 10 connections -> 200/s each -> 5 ms apart.
        assert_eq!(batch_interval_ns(2000.0, 10, 1), 5_000_000);
        // pipelining 4 per batch -> batches 20 ms apart.
        assert_eq!(batch_interval_ns(2000.0, 10, 4), 20_000_000);
    }

    #[test]
    fn stagger() {
        let i = 5_000_000;
        let dues: Vec<u64> = (0..10).map(|k| first_due(100, i, k, 10)).collect();
        assert_eq!(dues[0], 100);
        assert_eq!(dues[1], 100 + 500_000);
        assert_eq!(dues[9], 100 + 4_500_000);
    }

    #[test]
    fn exponential_gaps() {
        assert_eq!(exp_gap_ns(1000, 0), 1, "U = 0 gives the shortest gap");
        let longest = exp_gap_ns(1000, u64::MAX); // -ln(2^-53) ≈ 36.7 means
        assert!((36_000..=40_000).contains(&longest), "longest gap {longest}");
        let mut rng = crate::base::rng::Rng::new(7);
        let n = 200_000u64;
        let gaps: Vec<u64> = (0..n).map(|_| exp_gap_ns(10_000, rng.next())).collect();
        let mean = gaps.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 10_000.0).abs() < 150.0, "mean gap {mean}");
        // exponential: P(gap > mean) = 1/e
        let above = gaps.iter().filter(|&&g| g > 10_000).count() as f64 / n as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "share above the mean {above}");
    }

    #[test]
    fn unsent_counting() {
        assert_eq!(batches_between(10, 10, 5), 0);
        assert_eq!(batches_between(10, 11, 5), 1);
        assert_eq!(batches_between(10, 20, 5), 2);
        assert_eq!(batches_between(10, 21, 5), 3);
    }
}
