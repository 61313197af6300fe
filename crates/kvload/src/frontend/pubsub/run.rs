//! pubsub::run: the run's order — subscribers first (each confirmed subscribed before any
//! message is published, `subscriber`), then the publishers (`publisher`), then a bounded
//! drain until every expected message arrived, then the accounting and the report.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::base::clock;
use crate::base::event_loop::{IoKind, IoUsed};
use crate::engine::stats::{self, ThreadStats};
use crate::report::{self, RunInfo, TestResult};

use super::conn::{Shared, REPLY_TIMEOUT_S};
use super::options::{Bound, PubsubOptions};
use super::payload::{self, Tally};
use super::publisher::{self, Published};
use super::subscriber::{self, Sub};

/// The accounting over all subscribers after the drain.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize)]
pub struct Counts {
    pub published: u64,
    pub expected: u64,
    pub delivered: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub foreign: u64,
    pub subscribers_with_loss: u64,
    /// Subscribers whose connection the server closed during the run.
    pub disconnected: u64,
}

/// Sums each subscriber's (channels, tally) against the acknowledged publishes per channel.
fn count<'a>(subs: impl Iterator<Item = (&'a [usize], &'a Tally, bool)>, published: &[u64]) -> Counts {
    let mut c = Counts { published: published.iter().sum(), ..Counts::default() };
    for (channels, tally, closed) in subs {
        c.disconnected += u64::from(closed);
        let want = payload::expected(channels, published);
        let lost = tally.lost(want);
        c.expected += want;
        c.delivered += tally.unique;
        c.lost += lost;
        c.duplicated += tally.duplicated;
        c.foreign += tally.foreign;
        c.subscribers_with_loss += u64::from(lost > 0);
    }
    c
}

/// A subscriber thread's result: its statistics and its connections' tallies.
type SubscriberThread = std::thread::JoinHandle<Result<(ThreadStats, Vec<Sub>), String>>;

/// Starts the subscriber threads and waits until every subscription is confirmed.
fn start_subscribers(o: &PubsubOptions, shared: &Arc<Shared>) -> Result<Vec<SubscriberThread>, String> {
    let threads = o.threads.min(o.subscribers);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let ids: Vec<usize> = (t..o.subscribers).step_by(threads).collect();
            let (o, shared) = (o.clone(), Arc::clone(shared));
            std::thread::spawn(move || {
                let r = subscriber::subscriber_thread(&o, ids, &shared);
                if let Err(e) = &r {
                    shared.fail(e.clone());
                }
                r
            })
        })
        .collect();
    let deadline = clock::now() + REPLY_TIMEOUT_S * 1_000_000_000;
    while shared.ready.load(Ordering::SeqCst) < o.subscribers {
        if let Some(e) = shared.failure() {
            return Err(e);
        }
        if clock::now() > deadline {
            return Err(format!("only {} of {} subscribers subscribed in {REPLY_TIMEOUT_S} s", shared.ready.load(Ordering::SeqCst), o.subscribers));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(handles)
}

fn run_publishers(o: &PubsubOptions, t0: u64) -> Result<Vec<Published>, String> {
    let handles: Vec<_> = (0..o.publishers)
        .map(|p| {
            let o = o.clone();
            std::thread::spawn(move || match o.rps {
                Some(r) => publisher::open_publisher(&o, p, t0, r / o.publishers as f64),
                None => publisher::closed_publisher(&o, p, t0),
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.join().map_err(|_| "a publisher thread panicked".to_string())??);
    }
    Ok(out)
}

/// Waits (at most --drain seconds) until the subscribers received `expected` messages;
/// returns the seconds waited.
fn drain(o: &PubsubOptions, shared: &Shared, expected: u64) -> f64 {
    let start = clock::now();
    let limit = start + (o.drain_s * 1e9) as u64;
    while shared.delivered.load(Ordering::SeqCst) < expected && clock::now() < limit && shared.failure().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
    (clock::now() - start) as f64 / 1e9
}

pub fn run(o: &PubsubOptions) -> Result<(), String> {
    let shared = Arc::new(Shared::default());
    let handles = match start_subscribers(o, &shared) {
        Ok(h) => h,
        Err(e) => {
            shared.done.store(true, Ordering::SeqCst);
            return Err(e);
        }
    };
    let t0 = clock::now() + 5_000_000;
    shared.t0.store(t0, Ordering::SeqCst);
    let published = run_publishers(o, t0);
    let per_channel: Vec<u64> = match &published {
        Ok(p) => (0..o.channels).map(|c| p.iter().map(|x| x.per_channel[c]).sum()).collect(),
        Err(_) => vec![0; o.channels],
    };
    let expected: u64 = (0..o.subscribers).map(|i| payload::expected(&payload::channels_of(i, o.per_subscriber, o.channels), &per_channel)).sum();
    let drained_s = if published.is_ok() { drain(o, &shared, expected) } else { 0.0 };
    shared.done.store(true, Ordering::SeqCst);
    let mut parts = Vec::new();
    let mut subs = Vec::new();
    for h in handles {
        let (st, s) = h.join().map_err(|_| "a subscriber thread panicked".to_string())??;
        parts.push(st);
        subs.extend(s);
    }
    let published = published?;
    let pub_end = published.iter().map(|p| p.st.end).max().unwrap_or(t0);
    let publish_errors: u64 = published.iter().map(|p| p.st.errors.total()).sum();
    for part in parts.iter_mut() {
        part.end = pub_end; // rates are over the publishing time, not the drain
    }
    parts.extend(published.into_iter().map(|p| p.st));
    let counts = count(subs.iter().map(|s| (&s.channels[..], &s.tally, s.closed)), &per_channel);
    report_run(o, parts, &counts, publish_errors, drained_s)
}

/// The options of kvload's report header that describe this run.
fn report_options(o: &PubsubOptions) -> RunInfo {
    RunInfo {
        host: o.host.clone(),
        port: o.port,
        clients: o.subscribers + o.publishers,
        threads: o.threads.min(o.subscribers) + o.publishers,
        pipeline: o.pipeline,
        requests: match o.bound {
            Bound::Messages(n) => n * o.publishers as u64,
            Bound::Seconds(_) => 0,
        },
        duration: match o.bound {
            Bound::Seconds(s) => Some(s),
            Bound::Messages(_) => None,
        },
        data_size: o.data_size,
        rps: o.rps,
        quiet: o.quiet,
        tests: vec![format!("{} {}", o.mode.publish(), o.mode.name().to_uppercase())],
        ..RunInfo::default()
    }
}

fn report_run(o: &PubsubOptions, parts: Vec<ThreadStats>, c: &Counts, publish_errors: u64, drained_s: f64) -> Result<(), String> {
    let ko = report_options(o);
    let name = format!("PUBSUB {} {}x{} P={}", o.mode.name().to_uppercase(), o.subscribers, o.channels, o.publishers);
    let merged = stats::merge(parts, ko.precision);
    let dur = merged.duration_s.max(1e-9);
    let r = TestResult::new(&ko, name, merged);
    let summary = PubsubJson {
        mode: o.mode.name(),
        subscribers: o.subscribers,
        channels: o.channels,
        channels_per_subscriber: o.per_subscriber.min(o.channels),
        publishers: o.publishers,
        published_rps: c.published as f64 / dur,
        delivered_rps: c.delivered as f64 / dur,
        fanout: if c.published > 0 { c.delivered as f64 / c.published as f64 } else { 0.0 },
        publish_errors,
        drain_s: drained_s,
        counts: c.clone(),
    };
    if !o.quiet {
        report::print(&ko, &r, &[]);
    }
    println!(
        "pubsub: published {} ({:.2}/s), delivered {} ({:.2}/s, fan-out {:.2}), expected {}, lost {}, duplicated {}, disconnected {}, p50 {:.3} ms p99 {:.3} ms",
        c.published, summary.published_rps, c.delivered, summary.delivered_rps, summary.fanout, c.expected, c.lost, c.duplicated, c.disconnected, r.corrected.p50, r.corrected.p99
    );
    if let Some(path) = &o.json {
        let io = IoUsed { kind: IoKind::Epoll, note: Some("pubsub: subscribers on epoll threads, blocking publisher threads".into()) };
        let mut v = serde_json::to_value(report::report(&ko, &io, std::slice::from_ref(&r))).map_err(|e| e.to_string())?;
        v["tests"][0]["pubsub"] = serde_json::to_value(&summary).map_err(|e| e.to_string())?;
        let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

/// The `pubsub` object of the report's test (docs/KVLOAD.md).
#[derive(serde::Serialize)]
struct PubsubJson {
    mode: &'static str,
    subscribers: usize,
    channels: usize,
    channels_per_subscriber: usize,
    publishers: usize,
    published_rps: f64,
    delivered_rps: f64,
    fanout: f64,
    publish_errors: u64,
    drain_s: f64,
    #[serde(flatten)]
    counts: Counts,
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_loss_per_subscriber() {
        let mk = |channels: Vec<usize>, seqs: &[u64]| {
            let mut tally = Tally::new(1);
            for &s in seqs {
                tally.note(0, s);
            }
            (channels, tally)
        };
        let published = [2, 1];
        let tallies = [mk(vec![0], &[0, 2]), mk(vec![0, 1], &[0, 1, 1])];
        let c = count(tallies.iter().enumerate().map(|(i, (ch, t))| (&ch[..], t, i == 0)), &published);
        assert_eq!(c.disconnected, 1);
        assert_eq!(c.published, 3);
        assert_eq!((c.expected, c.delivered, c.lost, c.duplicated, c.subscribers_with_loss), (5, 4, 1, 1, 1));
    }
}
