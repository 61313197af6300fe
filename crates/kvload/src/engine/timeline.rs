//! timeline: what a failover looks like from the client. Per second of the measured
//! span: errors by kind (`reconnect::KINDS`); the report joins them with the second's
//! successful replies and p99 (stats' intervals). With `--reconnect-on-error` also a
//! per-millisecond count of successes and errors, from which the outages are found:
//! from the last success before an error to the first success after it.

use serde::Serialize;

use crate::engine::reconnect::KINDS;

const NS_PER_MS: u64 = 1_000_000;

/// One thread's timeline (times relative to its measure start).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Per second: errors by kind.
    pub kinds: Vec<[u64; KINDS.len()]>,
    /// Per lane, per millisecond: (successes, errors); empty unless `fine`. A lane is a
    /// cluster shard (its connections' first node; standalone: one lane), so an outage of
    /// one shard shows while the others go on.
    pub ms: Vec<Vec<(u32, u32)>>,
    /// The lane the next `ok` / `error` counts for (set per connection by the loop).
    pub lane: usize,
    fine: bool,
    /// --ack-log: the key of every acknowledged command, one per line (None: not kept).
    pub acks: Option<Vec<u8>>,
}

impl Timeline {
    pub fn new(fine: bool) -> Self {
        Timeline { kinds: Vec::new(), ms: Vec::new(), lane: 0, fine, acks: None }
    }

    /// `n` successful replies `since_ns` after the measure start.
    #[inline]
    pub fn ok_n(&mut self, since_ns: u64, n: u64) {
        if self.fine {
            let slot = &mut self.ms_slot(since_ns).0;
            *slot = slot.saturating_add(n.min(u64::from(u32::MAX)) as u32);
        }
    }

    /// An error of `kind` (index in KINDS) `since_ns` after the measure start.
    pub fn error(&mut self, since_ns: u64, kind: usize, n: u64) {
        let s = (since_ns / 1_000_000_000) as usize;
        if self.kinds.len() <= s {
            self.kinds.resize(s + 1, [0; KINDS.len()]);
        }
        self.kinds[s][kind] += n;
        if self.fine {
            let slot = self.ms_slot(since_ns);
            slot.1 = slot.1.saturating_add(n as u32);
        }
    }

    fn ms_slot(&mut self, since_ns: u64) -> &mut (u32, u32) {
        let i = (since_ns / NS_PER_MS) as usize;
        if self.ms.len() <= self.lane {
            self.ms.resize(self.lane + 1, Vec::new());
        }
        let ms = &mut self.ms[self.lane];
        if ms.len() <= i {
            ms.resize(i + 1, (0, 0));
        }
        &mut ms[i]
    }

    /// Adds another thread's timeline (same measure start, within a millisecond).
    pub fn add(&mut self, o: &Timeline) {
        if self.kinds.len() < o.kinds.len() {
            self.kinds.resize(o.kinds.len(), [0; KINDS.len()]);
        }
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
        if self.ms.len() < o.ms.len() {
            self.ms.resize(o.ms.len(), Vec::new());
        }
        for (lane, other) in self.ms.iter_mut().zip(&o.ms) {
            if lane.len() < other.len() {
                lane.resize(other.len(), (0, 0));
            }
            for (a, b) in lane.iter_mut().zip(other) {
                a.0 += b.0;
                a.1 += b.1;
            }
        }
        self.fine |= o.fine;
        if let Some(more) = &o.acks {
            self.acks.get_or_insert_with(Vec::new).extend_from_slice(more);
        }
    }

    /// --ack-log: keeps the key (first argument) of the RESP command `req`, acknowledged.
    pub fn ack(&mut self, req: &[u8]) {
        if let (Some(acks), Some(key)) = (self.acks.as_mut(), first_arg(req)) {
            acks.extend_from_slice(key);
            acks.push(b'\n');
        }
    }
}

/// The first argument (after the command name) of one RESP-encoded command.
pub fn first_arg(req: &[u8]) -> Option<&[u8]> {
    let mut pos = req.iter().position(|&b| b == b'\n')? + 1; // past *N\r\n
    for n in 0..2 {
        let line_end = pos + req[pos..].iter().position(|&b| b == b'\n')?;
        let len: usize = std::str::from_utf8(req.get(pos + 1..line_end.checked_sub(1)?)?).ok()?.parse().ok()?;
        let start = line_end + 1;
        if n == 1 {
            return req.get(start..start + len);
        }
        pos = start + len + 2;
    }
    None
}

/// A span without a successful reply that had errors in it (ms from the measure start).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outage {
    /// The end of the last millisecond with a success before the errors (0: none before).
    pub from_ms: u64,
    pub first_error_ms: u64,
    /// The millisecond of the first success after the errors; null: none until the end.
    pub to_ms: Option<u64>,
}

/// The outages of a merged per-millisecond series (see `Outage`).
pub fn outages(ms: &[(u32, u32)]) -> Vec<Outage> {
    let mut out = Vec::new();
    let mut last_ok_end = 0u64;
    let mut open: Option<Outage> = None;
    for (i, &(ok, err)) in ms.iter().enumerate() {
        let t = i as u64;
        if err > 0 && open.is_none() {
            // successes in the same ms as the first error came before it (a lost
            // connection's errors are counted after the replies read before the loss)
            let from_ms = if ok > 0 { t } else { last_ok_end };
            open = Some(Outage { from_ms, first_error_ms: t, to_ms: None });
        }
        if ok > 0 {
            if let Some(mut o) = open.take_if(|o| o.first_error_ms < t) {
                o.to_ms = Some(t);
                out.push(o);
            }
            last_ok_end = t + 1;
        }
    }
    out.extend(open);
    out
}

/// The outages of every lane (a cluster's shards), by their first error.
pub fn lane_outages(lanes: &[Vec<(u32, u32)>]) -> Vec<Outage> {
    let mut all: Vec<Outage> = lanes.iter().flat_map(|ms| outages(ms)).collect();
    all.sort_by_key(|o| (o.first_error_ms, o.from_ms));
    all
}

/// One second of the report's `timeline`.
#[derive(Debug, Serialize)]
pub struct SecondJson {
    pub t_s: u64,
    /// Successful replies.
    pub ok: u64,
    /// Errors by kind (only kinds that occurred).
    pub errors: std::collections::BTreeMap<&'static str, u64>,
    pub p99_ms: f64,
}

/// The report's `timeline` of one test.
#[derive(Debug, Serialize)]
pub struct TimelineJson {
    /// Wall-clock time of the measure start (ms since the Unix epoch), to line the
    /// seconds up with events outside kvload (a fault's time).
    pub start_unix_ms: u64,
    pub seconds: Vec<SecondJson>,
    /// With --reconnect-on-error (else null): spans without a success that had errors.
    pub outages: Option<Vec<Outage>>,
}

/// Joins the error kinds with the per-second (ok, p99) of stats' intervals.
pub fn to_json(t: &Timeline, ok_p99: &[(u64, f64)], start_unix_ms: u64) -> TimelineJson {
    let n = ok_p99.len().max(t.kinds.len());
    let seconds = (0..n)
        .map(|s| {
            let (ok, p99_ms) = ok_p99.get(s).copied().unwrap_or((0, 0.0));
            let errors = t.kinds.get(s).map_or_else(Default::default, |k| {
                KINDS.iter().zip(k).filter(|(_, &n)| n > 0).map(|(&name, &n)| (name, n)).collect()
            });
            SecondJson { t_s: s as u64, ok, errors, p99_ms }
        })
        .collect();
    let outages = t.fine.then(|| lane_outages(&t.ms));
    TimelineJson { start_unix_ms, seconds, outages }
}

/// Wall-clock ms since the epoch of the monotonic instant `mono_ns` (clock::now's scale).
pub fn unix_ms_of(mono_ns: u64) -> u64 {
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let ago = crate::base::clock::now().saturating_sub(mono_ns);
    wall.saturating_sub(ago) / NS_PER_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_of_an_acknowledged_command_is_logged() {
        let set = crate::base::resp::encode_args(&[b"SET", b"k:000042", b"v"]);
        assert_eq!(first_arg(&set), Some(&b"k:000042"[..]));
        assert_eq!(first_arg(&crate::base::resp::encode_args(&[b"PING"])), None);
        let mut t = Timeline::new(false);
        t.ack(&set);
        assert_eq!(t.acks, None, "not kept without --ack-log");
        t.acks = Some(Vec::new());
        t.ack(&set);
        let mut u = Timeline::new(false);
        u.acks = Some(b"k:1\n".to_vec());
        t.add(&u);
        assert_eq!(t.acks.as_deref(), Some(&b"k:000042\nk:1\n"[..]));
    }

    #[test]
    fn an_outage_runs_from_the_last_success_to_the_next() {
        // ok at 0..3 ms, errors at 5 and 7, nothing at 4 and 6, ok again at 9
        let mut ms = vec![(1, 0); 4];
        ms.extend([(0, 0), (0, 2), (0, 0), (0, 1), (0, 0), (3, 0), (1, 0)]);
        assert_eq!(outages(&ms), vec![Outage { from_ms: 4, first_error_ms: 5, to_ms: Some(9) }]);
    }

    #[test]
    fn successes_in_the_first_errors_millisecond_came_before_them() {
        let ms = vec![(5, 0), (3, 4), (0, 0), (0, 0), (2, 0)];
        assert_eq!(outages(&ms), vec![Outage { from_ms: 1, first_error_ms: 1, to_ms: Some(4) }]);
    }

    #[test]
    fn a_gap_without_errors_is_no_outage_and_an_open_one_ends_null() {
        let ms = vec![(1, 0), (0, 0), (0, 0), (1, 0), (0, 1), (0, 1)];
        assert_eq!(outages(&ms), vec![Outage { from_ms: 4, first_error_ms: 4, to_ms: None }]);
    }

    #[test]
    fn threads_merge_and_the_json_lists_kinds_that_occurred() {
        let mut a = Timeline::new(true);
        a.ok_n(100, 1);
        a.error(1_500_000_000, crate::engine::reconnect::CONNECTION, 3);
        let mut b = Timeline::new(true);
        b.error(1_600_000_000, 3, 2);
        b.ok_n(2_100_000_000, 1);
        a.add(&b);
        let j = to_json(&a, &[(10, 0.5), (0, 0.0), (7, 0.2)], 42);
        assert_eq!(j.seconds.len(), 3);
        assert_eq!(j.seconds[1].errors.get("connection"), Some(&3));
        assert_eq!(j.seconds[1].errors.get("READONLY"), Some(&2));
        assert!(j.seconds[0].errors.is_empty());
        assert_eq!(j.outages, Some(vec![Outage { from_ms: 1, first_error_ms: 1500, to_ms: Some(2100) }]));
        assert_eq!(to_json(&Timeline::new(false), &[(1, 0.1)], 0).outages, None);
    }

    #[test]
    fn a_shards_outage_shows_while_another_shard_goes_on() {
        let mut t = Timeline::new(true);
        for ms in 0..10u64 {
            t.lane = 0;
            t.ok_n(ms * 1_000_000, 1); // shard 0 answers throughout
            t.lane = 1;
            match ms {
                0..=2 | 8.. => t.ok_n(ms * 1_000_000, 1),
                _ => t.error(ms * 1_000_000, crate::engine::reconnect::CONNECTION, 1),
            }
        }
        let j = to_json(&t, &[(17, 0.1)], 0);
        assert_eq!(j.outages, Some(vec![Outage { from_ms: 3, first_error_ms: 3, to_ms: Some(8) }]));
    }
}
