//! stats: per-thread HDR histograms (µs), error counters, 1-second intervals,
//! CPU usage, and merging at the end.

use hdrhistogram::Histogram;

use crate::base::resp::ErrClass;
use crate::engine::timeline::Timeline;

/// Highest trackable latency: one hour in µs (larger values saturate).
const MAX_US: u64 = 3_600_000_000;
const NS_PER_SEC: u64 = 1_000_000_000;
/// Bytes of the first error reply kept (see `ThreadStats::note_error`).
pub const FIRST_ERROR_MAX: usize = 200;

pub fn new_hist(sigfig: u8) -> Histogram<u64> {
    // Constant bounds; sigfig is validated by the CLI (0..=5), so this cannot fail.
    Histogram::new_with_bounds(1, MAX_US, sigfig.min(5)).unwrap_or_else(|e| {
        eprintln!("internal error: cannot create histogram: {e}");
        std::process::exit(1)
    })
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Errors {
    pub err: u64,
    pub moved: u64,
    pub ask: u64,
    pub timeout: u64,
    pub other: u64,
}

impl Errors {
    pub fn total(&self) -> u64 {
        self.err + self.moved + self.ask + self.timeout + self.other
    }
    pub fn add(&mut self, o: &Errors) {
        self.err += o.err;
        self.moved += o.moved;
        self.ask += o.ask;
        self.timeout += o.timeout;
        self.other += o.other;
    }
    #[inline]
    pub fn count(&mut self, c: ErrClass) {
        match c {
            ErrClass::Err => self.err += 1,
            ErrClass::Moved => self.moved += 1,
            ErrClass::Ask => self.ask += 1,
            ErrClass::Other => self.other += 1,
        }
    }
}

pub struct Interval {
    pub requests: u64,
    pub errors: u64,
    pub hist: Histogram<u64>,
}

/// Rusage of the calling thread (user, sys) in seconds.
pub fn thread_cpu() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Per-command results of a memtier run (one row of its table).
#[derive(Clone)]
pub struct CmdStats {
    pub hist: Histogram<u64>,
    pub requests: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
}

impl CmdStats {
    pub fn new(sigfig: u8) -> Self {
        CmdStats { hist: new_hist(sigfig), requests: 0, bytes_rx: 0, bytes_tx: 0, hits: 0, misses: 0, errors: 0 }
    }

    pub fn add(&mut self, o: &CmdStats) {
        // Same bounds and precision, so add cannot fail.
        let _ = self.hist.add(&o.hist);
        self.requests += o.requests;
        self.bytes_rx += o.bytes_rx;
        self.bytes_tx += o.bytes_tx;
        self.hits += o.hits;
        self.misses += o.misses;
        self.errors += o.errors;
    }
}

pub struct ThreadStats {
    pub corrected: Histogram<u64>,
    pub service: Histogram<u64>,
    /// Closed loop records only `corrected`; service is a copy at the end.
    pub open: bool,
    pub requests: u64,
    pub errors: Errors,
    pub late: u64,
    /// Of `late`, the sends kvload itself held back (see batch.rs `LATE_NS`).
    pub late_own: u64,
    pub unsent: u64,
    pub intervals: Vec<Interval>,
    pub measure_start: u64,
    pub end: u64,
    pub cpu_start: (f64, f64),
    pub cpu: (f64, f64),
    /// memtier mode: one entry per result row (empty otherwise).
    pub cmds: Vec<CmdStats>,
    /// memtier mode: the sum over clients of (client end - measure start), and their
    /// number: memtier's rate divides by the mean client end minus the mean start.
    pub client_time_ns: u128,
    pub clients: u64,
    /// memtier mode: requests still unanswered when the drain gave up.
    pub undrained: u64,
    /// The first error reply other than a redirect (its text, at most FIRST_ERROR_MAX bytes).
    pub first_error: Option<String>,
    /// Errors by kind per second (and per ms with --reconnect-on-error): `timeline`.
    pub timeline: Timeline,
    sigfig: u8,
    /// Full-precision corrected latencies of the current interval; folded into
    /// `corrected` and the interval's histogram when the interval changes, so each
    /// reply costs one histogram record.
    cur: Histogram<u64>,
    cur_idx: usize,
}

impl ThreadStats {
    pub fn new(sigfig: u8, open: bool) -> Self {
        ThreadStats {
            corrected: new_hist(sigfig),
            service: new_hist(sigfig),
            open,
            requests: 0,
            errors: Errors::default(),
            late: 0,
            late_own: 0,
            unsent: 0,
            intervals: Vec::new(),
            measure_start: 0,
            end: 0,
            cpu_start: (0.0, 0.0),
            cpu: (0.0, 0.0),
            cmds: Vec::new(),
            client_time_ns: 0,
            clients: 0,
            undrained: 0,
            first_error: None,
            timeline: Timeline::default(),
            sigfig,
            cur: new_hist(sigfig),
            cur_idx: 0,
        }
    }

    /// Index of the interval `now` falls in, rolling the current one over if needed.
    #[inline]
    fn interval_idx(&mut self, now: u64) -> usize {
        let idx = (now.saturating_sub(self.measure_start) / NS_PER_SEC) as usize;
        if idx > self.cur_idx || self.intervals.is_empty() {
            self.roll(idx.max(self.cur_idx));
        }
        self.cur_idx
    }

    /// Folds `cur` into the totals and the current interval; moves to `idx`.
    #[cold]
    fn roll(&mut self, idx: usize) {
        self.fold();
        self.cur_idx = idx;
        while self.intervals.len() <= idx {
            let hist = new_hist(self.sigfig.min(2));
            self.intervals.push(Interval { requests: 0, errors: 0, hist });
        }
    }

    fn fold(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        // Same bounds and precision: add cannot fail.
        let _ = self.corrected.add(&self.cur);
        if let Some(iv) = self.intervals.get_mut(self.cur_idx) {
            for v in self.cur.iter_recorded() {
                iv.hist.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.cur.reset();
    }

    /// Records one successful reply (latencies in ns).
    #[inline]
    pub fn record(&mut self, now: u64, corrected_ns: u64, service_ns: u64) {
        self.record_n(now, corrected_ns, service_ns, 1);
    }

    /// Records `n` successful replies read at the same time with the same latencies (a
    /// batch's replies in one read): the same as `n` calls of `record`, at the cost of one.
    #[inline]
    pub fn record_n(&mut self, now: u64, corrected_ns: u64, service_ns: u64, n: u64) {
        let idx = self.interval_idx(now);
        self.cur.saturating_record_n((corrected_ns / 1000).max(1), n);
        if self.open {
            self.service.saturating_record_n((service_ns / 1000).max(1), n);
        }
        self.requests += n;
        self.intervals[idx].requests += n;
        self.timeline.ok_n(now.saturating_sub(self.measure_start), n);
    }

    /// memtier mode: one reply to a command of row `row` (latency in ns, reply bytes, hit/miss).
    #[inline]
    pub fn record_cmd(&mut self, row: usize, latency_ns: u64, rx: usize, hit: Option<bool>, error: bool) {
        let c = &mut self.cmds[row];
        c.bytes_rx += rx as u64;
        if error {
            c.errors += 1;
            return;
        }
        c.hist.saturating_record((latency_ns / 1000).max(1));
        c.requests += 1;
        match hit {
            Some(true) => c.hits += 1,
            Some(false) => c.misses += 1,
            None => {}
        }
    }

    /// Keeps the first error reply's text (not a MOVED/ASK redirect); later ones cost a
    /// check of an `Option`.
    #[inline]
    pub fn note_error(&mut self, class: ErrClass, msg: &[u8]) {
        if self.first_error.is_none() && matches!(class, ErrClass::Err | ErrClass::Other) {
            let text = &msg[..msg.len().min(FIRST_ERROR_MAX)];
            self.first_error = Some(String::from_utf8_lossy(text).into_owned());
        }
    }

    #[inline]
    pub fn record_error(&mut self, now: u64, class: ErrClass) {
        self.errors.count(class);
        let idx = self.interval_idx(now);
        self.intervals[idx].errors += 1;
    }

    pub fn start_measuring(&mut self, now: u64) {
        self.measure_start = now;
        self.cpu_start = thread_cpu();
    }

    pub fn finish(&mut self, now: u64) {
        self.fold();
        self.end = now;
        let (u, s) = thread_cpu();
        self.cpu = (u - self.cpu_start.0, s - self.cpu_start.1);
        if !self.open {
            self.service = self.corrected.clone();
        }
    }
}

/// Merged results of one test over all threads.
pub struct Merged {
    /// memtier mode: per result row.
    pub cmds: Vec<CmdStats>,
    pub corrected: Histogram<u64>,
    pub service: Histogram<u64>,
    pub requests: u64,
    pub errors: Errors,
    pub late: u64,
    /// Of `late`, the sends kvload itself held back (see batch.rs `LATE_NS`).
    pub late_own: u64,
    pub unsent: u64,
    pub duration_s: f64,
    /// memtier mode: memtier's run time — the mean over clients of each one's end
    /// (first reply at or after --test-time, or its last of -n) minus the start.
    pub client_duration_s: Option<f64>,
    /// memtier mode: requests left unanswered when the drain after --test-time gave up.
    pub undrained: u64,
    /// The first error reply (not a redirect) of the first thread that had one.
    pub first_error: Option<String>,
    pub intervals: Vec<IntervalOut>,
    /// The threads' timelines added up; `start_ns`: the earliest measure start (monotonic).
    pub timeline: Timeline,
    pub start_ns: u64,
    pub user_s: f64,
    pub sys_s: f64,
}

impl Merged {
    /// The time rates are computed over: memtier's per-client mean in memtier mode,
    /// else the whole measured span.
    pub fn rate_duration_s(&self) -> f64 {
        self.client_duration_s.unwrap_or(self.duration_s)
    }
}

pub struct IntervalOut {
    pub t_s: f64,
    pub requests: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
}

pub fn merge(parts: Vec<ThreadStats>, sigfig: u8) -> Merged {
    let start = parts.iter().map(|p| p.measure_start).min().unwrap_or(0);
    let end = parts.iter().map(|p| p.end).max().unwrap_or(start);
    let duration_s = (end.saturating_sub(start)) as f64 / 1e9;
    let clients: u64 = parts.iter().map(|p| p.clients).sum();
    let client_time: u128 = parts.iter().map(|p| p.client_time_ns).sum();
    let client_duration_s = (clients > 0).then(|| client_time as f64 / clients as f64 / 1e9);
    let mut m = Merged {
        cmds: Vec::new(),
        corrected: new_hist(sigfig),
        service: new_hist(sigfig),
        requests: 0,
        errors: Errors::default(),
        late: 0,
        late_own: 0,
        unsent: 0,
        duration_s,
        client_duration_s,
        undrained: parts.iter().map(|p| p.undrained).sum(),
        first_error: parts.iter().find_map(|p| p.first_error.clone()),
        intervals: Vec::new(),
        timeline: Timeline::default(),
        start_ns: start,
        user_s: 0.0,
        sys_s: 0.0,
    };
    let mut ivs: Vec<Interval> = Vec::new();
    for p in parts {
        // Same bounds and precision, so add cannot fail.
        let _ = m.corrected.add(&p.corrected);
        let _ = m.service.add(&p.service);
        m.requests += p.requests;
        m.errors.add(&p.errors);
        m.late += p.late;
        m.late_own += p.late_own;
        m.unsent += p.unsent;
        m.user_s += p.cpu.0;
        m.sys_s += p.cpu.1;
        m.timeline.add(&p.timeline);
        for (i, c) in p.cmds.iter().enumerate() {
            match m.cmds.get_mut(i) {
                Some(mc) => mc.add(c),
                None => m.cmds.push(c.clone()),
            }
        }
        for (i, iv) in p.intervals.into_iter().enumerate() {
            if ivs.len() <= i {
                ivs.push(iv);
            } else {
                ivs[i].requests += iv.requests;
                ivs[i].errors += iv.errors;
                let _ = ivs[i].hist.add(&iv.hist);
            }
        }
    }
    m.intervals = interval_out(ivs, duration_s);
    m
}

fn interval_out(mut ivs: Vec<Interval>, duration_s: f64) -> Vec<IntervalOut> {
    // The replies to requests in flight at a --duration deadline can open one more interval
    // of near-zero width (an absurd rate): fold a last interval under half a second wide
    // into the second before it.
    if ivs.len() >= 2 && duration_s - ((ivs.len() - 1) as f64) < 0.5 {
        if let Some(tail) = ivs.pop() {
            let last = ivs.last_mut().expect("len >= 1");
            last.requests += tail.requests;
            last.errors += tail.errors;
            let _ = last.hist.add(&tail.hist);
        }
    }
    let n = ivs.len();
    ivs.into_iter()
        .enumerate()
        .map(|(i, iv)| {
            let t_s = if i + 1 == n { duration_s.max(i as f64) } else { (i + 1) as f64 };
            let width = (t_s - i as f64).max(1e-9);
            IntervalOut {
                t_s,
                requests: iv.requests,
                rps: iv.requests as f64 / width,
                p50_ms: pct_ms(&iv.hist, 50.0),
                p99_ms: pct_ms(&iv.hist, 99.0),
                errors: iv.errors,
            }
        })
        .collect()
}

/// Percentile in milliseconds (0 for an empty histogram).
pub fn pct_ms(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_percentile(q) as f64 / 1000.0
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Summary {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

pub fn summary(h: &Histogram<u64>) -> Summary {
    let empty = h.is_empty();
    let ms = |v: u64| if empty { 0.0 } else { v as f64 / 1000.0 };
    Summary {
        min: ms(h.min()),
        mean: if empty { 0.0 } else { h.mean() / 1000.0 },
        p50: pct_ms(h, 50.0),
        p90: pct_ms(h, 90.0),
        p95: pct_ms(h, 95.0),
        p99: pct_ms(h, 99.0),
        p99_9: pct_ms(h, 99.9),
        p99_99: pct_ms(h, 99.99),
        max: ms(h.max()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_merge() {
        let mut a = ThreadStats::new(3, true);
        a.start_measuring(0);
        a.record(500_000_000, 2_000_000, 1_000_000);
        a.record(1_500_000_000, 4_000_000, 1_000_000);
        a.record_error(1_600_000_000, ErrClass::Moved);
        a.finish(2_000_000_000);
        let mut b = ThreadStats::new(3, true);
        b.start_measuring(0);
        b.record(100, 3_000_000, 3_000_000);
        b.finish(1_000_000_000);
        let m = merge(vec![a, b], 3);
        assert_eq!(m.requests, 3);
        assert_eq!(m.errors.moved, 1);
        assert_eq!(m.intervals.len(), 2);
        assert_eq!(m.intervals[0].requests, 2);
        assert_eq!(m.intervals[1].errors, 1);
        assert!((m.duration_s - 2.0).abs() < 1e-9);
        let s = summary(&m.corrected);
        assert!((s.p50 - 3.0).abs() < 0.01);
        assert!((summary(&m.service).max - 3.0).abs() < 0.01);
    }

    #[test]
    fn the_first_error_reply_is_kept_not_redirects() {
        let mut a = ThreadStats::new(3, false);
        a.note_error(ErrClass::Moved, b"MOVED 1 127.0.0.1:7000");
        assert_eq!(a.first_error, None);
        a.note_error(ErrClass::Err, b"ERR wrong number of arguments for 'lpush' command");
        a.note_error(ErrClass::Other, b"WRONGTYPE later");
        let mut b = ThreadStats::new(3, false);
        b.note_error(ErrClass::Other, &[b'x'; 500]);
        assert_eq!(b.first_error.as_deref().map(str::len), Some(FIRST_ERROR_MAX));
        let m = merge(vec![ThreadStats::new(3, false), a, b], 3);
        assert_eq!(m.first_error.as_deref(), Some("ERR wrong number of arguments for 'lpush' command"));
    }

    #[test]
    fn n_replies_at_once_count_as_n_records() {
        let (mut one, mut n) = (ThreadStats::new(3, true), ThreadStats::new(3, true));
        for s in [&mut one, &mut n] {
            s.start_measuring(0);
            s.timeline = Timeline::new(true);
        }
        for _ in 0..3 {
            one.record(1_500_000_000, 2_000_000, 1_000_000);
        }
        n.record_n(1_500_000_000, 2_000_000, 1_000_000, 3);
        one.finish(2_000_000_000);
        n.finish(2_000_000_000);
        assert_eq!(n.requests, 3);
        assert_eq!(n.intervals.iter().map(|i| i.requests).collect::<Vec<_>>(), [0, 3]);
        assert_eq!((n.corrected.len(), n.service.len()), (3, 3));
        assert_eq!(n.corrected, one.corrected);
        assert_eq!(n.service, one.service);
        assert_eq!(n.timeline.ms, one.timeline.ms);
        assert_eq!(n.timeline.ms[0][1500], (3, 0));
    }

    #[test]
    fn a_sliver_after_the_deadline_joins_the_last_second() {
        let mut a = ThreadStats::new(3, false);
        a.start_measuring(0);
        a.record(500_000_000, 1_000_000, 1_000_000);
        a.record(1_500_000_000, 1_000_000, 1_000_000);
        a.record(2_000_000_100, 1_000_000, 1_000_000);
        a.finish(2_000_000_200);
        let m = merge(vec![a], 3);
        assert_eq!(m.intervals.len(), 2);
        assert_eq!(m.intervals[1].requests, 2);
        assert!(m.intervals[1].rps < 3.0, "{}", m.intervals[1].rps);
        assert_eq!(m.intervals.iter().map(|i| i.requests).sum::<u64>(), m.requests);
    }
}
