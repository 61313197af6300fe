//! staircase: memtier's client ramp (`--clients-start N --clients-step N --step-duration S`).
//! A run starts with `start` connections and adds `step` more every `step_s` seconds up to
//! the full count; the last step (at the full count) lasts until the end of the run. Each
//! step is measured on its own, so the report has one row per step (connections → ops/s,
//! latency percentiles) beside the totals over the whole ramp.
//!
//! How kvload runs it: each step is one measured run of the engine with that step's
//! connections (its share per thread as in a plain run). The connections of a step are
//! opened before it starts and closed after it ends, so the connect time of the added
//! connections falls between steps instead of inside one (memtier keeps the earlier
//! connections open and connects the new ones at the step's start).

use crate::engine::stats::{self, Merged};

/// The three flags together (all positive; the front ends' options check that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Ramp {
    pub start: usize,
    pub step: usize,
    pub step_s: u64,
}

/// One step of the schedule: `clients` connections from `from_s` to `to_s` (seconds
/// from the start of the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub clients: usize,
    pub from_s: u64,
    pub to_s: u64,
}

impl Step {
    pub fn seconds(&self) -> u64 {
        self.to_s - self.from_s
    }
}

/// The steps of a run of `total_s` seconds up to `max` clients, as memtier's
/// print_staircase_pattern lays them out: step k has min(start + k·step, max) clients
/// from k·step_s; the step that reaches `max` runs to the end; steps that would start at
/// or after the end are dropped (the full count is then never reached).
pub fn schedule(r: &Ramp, max: usize, total_s: u64) -> Vec<Step> {
    let mut out = Vec::new();
    for k in 0.. {
        let clients = (r.start + k * r.step).min(max);
        let from_s = k as u64 * r.step_s;
        if k > 0 && from_s >= total_s {
            break;
        }
        let last = clients >= max;
        let to_s = if last { total_s } else { (k as u64 + 1) * r.step_s }.min(total_s);
        out.push(Step { clients, from_s, to_s });
        if last {
            break;
        }
    }
    out
}

/// What memtier refuses about a ramp (its messages), given the full count per thread
/// (`-c`), whether a test time was given and whether a request count was.
pub fn refusal(r: &Ramp, max: usize, timed: bool, counted: bool) -> Option<String> {
    if counted {
        return Some("--requests cannot be used with client staircase mode. Use --test-time instead".into());
    }
    if r.start >= max {
        return Some(format!("--clients-start ({}) must be less than --clients ({max})", r.start));
    }
    if !timed {
        return Some("--test-time is required when using client staircase mode".into());
    }
    None
}

/// The three flags as given (None: not given); an error unless all or none are.
pub fn from_flags(start: Option<usize>, step: Option<usize>, step_s: Option<u64>) -> Result<Option<Ramp>, String> {
    match (start, step, step_s) {
        (None, None, None) => Ok(None),
        (Some(start), Some(step), Some(step_s)) => Ok(Some(Ramp { start, step, step_s })),
        _ => Err("--clients-start, --clients-step, and --step-duration must all be specified together".into()),
    }
}

/// The results of one step.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepResult {
    pub step: usize,
    /// Connections open during the step (all threads).
    pub connections: usize,
    pub from_s: u64,
    pub to_s: u64,
    pub requests: u64,
    /// Measured time of the step (s) and requests per second over it.
    pub duration_s: f64,
    pub ops_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p99_9_ms: f64,
    pub errors: u64,
}

impl StepResult {
    pub fn of(step: usize, connections: usize, s: &Step, m: &Merged) -> Self {
        let secs = m.rate_duration_s();
        StepResult {
            step,
            connections,
            from_s: s.from_s,
            to_s: s.to_s,
            requests: m.requests,
            duration_s: secs,
            ops_sec: m.requests as f64 / secs.max(1e-9),
            p50_ms: stats::pct_ms(&m.corrected, 50.0),
            p99_ms: stats::pct_ms(&m.corrected, 99.0),
            p99_9_ms: stats::pct_ms(&m.corrected, 99.9),
            errors: m.errors.total(),
        }
    }
}

/// The totals over the whole ramp: the steps' counts and histograms added, their times
/// summed, their per-second intervals (and error timelines) one after the other.
pub fn combine(steps: Vec<Merged>) -> Option<Merged> {
    let mut it = steps.into_iter();
    let mut total = it.next()?;
    for m in it {
        let offset = total.duration_s;
        let _ = total.corrected.add(&m.corrected);
        let _ = total.service.add(&m.service);
        total.requests += m.requests;
        total.errors.add(&m.errors);
        total.late += m.late;
        total.late_own += m.late_own;
        total.unsent += m.unsent;
        total.undrained += m.undrained;
        total.user_s += m.user_s;
        total.sys_s += m.sys_s;
        total.duration_s += m.duration_s;
        total.client_duration_s = total.client_duration_s.zip(m.client_duration_s).map(|(a, b)| a + b);
        if total.first_error.is_none() {
            total.first_error = m.first_error;
        }
        for (i, c) in m.cmds.iter().enumerate() {
            match total.cmds.get_mut(i) {
                Some(t) => t.add(c),
                None => total.cmds.push(c.clone()),
            }
        }
        total.intervals.extend(m.intervals.into_iter().map(|mut iv| {
            iv.t_s += offset;
            iv
        }));
        let at = offset.round() as usize;
        if total.timeline.kinds.len() < at {
            total.timeline.kinds.resize(at, Default::default());
        }
        total.timeline.kinds.extend(m.timeline.kinds);
    }
    Some(total)
}

/// The per-step table printed after a run (stderr in memtier mode, stdout in kvload's).
pub fn table(steps: &[StepResult]) -> String {
    let mut t = String::from("Staircase (per step):\n  step  connections   from-to (s)       ops/sec   p50 (ms)   p99 (ms)  p99.9 (ms)\n");
    for s in steps {
        t.push_str(&format!(
            "  {:>4}  {:>11}  {:>5}-{:<5}  {:>12.2}  {:>9.3}  {:>9.3}  {:>10.3}\n",
            s.step, s.connections, s.from_s, s.to_s, s.ops_sec, s.p50_ms, s.p99_ms, s.p99_9_ms
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(start: usize, step: usize, step_s: u64) -> Ramp {
        Ramp { start, step, step_s }
    }

    fn clients(steps: &[Step]) -> Vec<usize> {
        steps.iter().map(|s| s.clients).collect()
    }

    #[test]
    fn steps_grow_to_the_full_count_and_the_last_runs_to_the_end() {
        let s = schedule(&ramp(2, 2, 1), 6, 5);
        assert_eq!(clients(&s), [2, 4, 6]);
        assert_eq!(s.iter().map(|s| (s.from_s, s.to_s)).collect::<Vec<_>>(), [(0, 1), (1, 2), (2, 5)]);
    }

    #[test]
    fn a_step_past_the_full_count_is_capped() {
        let s = schedule(&ramp(10, 20, 5), 45, 60);
        assert_eq!(clients(&s), [10, 30, 45]);
        assert_eq!(s[2], Step { clients: 45, from_s: 10, to_s: 60 });
    }

    #[test]
    fn a_short_run_never_reaches_the_full_count() {
        // memtier: steps that cannot start within test_time are not shown (nor run).
        let s = schedule(&ramp(1, 1, 2), 10, 5);
        assert_eq!(clients(&s), [1, 2, 3]);
        assert_eq!(s[2], Step { clients: 3, from_s: 4, to_s: 5 });
        assert_eq!(s.iter().map(Step::seconds).sum::<u64>(), 5);
        // A step as long as the run: only the first.
        assert_eq!(clients(&schedule(&ramp(1, 1, 9), 10, 3)), [1]);
    }

    #[test]
    fn memtiers_refusals() {
        assert!(from_flags(Some(1), None, Some(1)).unwrap_err().contains("all be specified together"));
        assert_eq!(from_flags(None, None, None), Ok(None));
        let r = ramp(5, 1, 1);
        assert!(refusal(&r, 5, true, false).unwrap().contains("--clients-start (5) must be less than --clients (5)"));
        assert!(refusal(&r, 6, false, false).unwrap().contains("--test-time is required"));
        assert!(refusal(&r, 6, true, true).unwrap().contains("--requests cannot be used"));
        assert_eq!(refusal(&r, 6, true, false), None);
    }

    fn merged(requests: u64, secs: f64, lat_us: u64) -> Merged {
        let mut t = stats::ThreadStats::new(3, false);
        for _ in 0..requests {
            t.corrected.saturating_record(lat_us);
        }
        t.requests = requests;
        t.end = (secs * 1e9) as u64;
        stats::merge(vec![t], 3)
    }

    #[test]
    fn totals_add_the_steps_up() {
        let steps = vec![merged(100, 1.0, 100), merged(300, 2.0, 1000)];
        let r = StepResult::of(1, 4, &Step { clients: 2, from_s: 1, to_s: 3 }, &steps[1]);
        assert_eq!((r.requests, r.connections), (300, 4));
        assert!((r.ops_sec - 150.0).abs() < 1e-6 && (r.p50_ms - 1.0).abs() < 0.01);
        let t = combine(steps).expect("two steps");
        assert_eq!(t.requests, 400);
        assert!((t.duration_s - 3.0).abs() < 1e-9);
        assert_eq!(t.corrected.len(), 400);
        assert!(combine(Vec::new()).is_none());
        assert!(table(&[r]).contains("  4  "));
    }
}
