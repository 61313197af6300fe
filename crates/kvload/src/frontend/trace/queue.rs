//! trace::queue: the records `kvload record`'s connections hand its one trace writer, bounded
//! in bytes across connections (`--queue-bytes`, default `DEFAULT_QUEUE_BYTES`). When the
//! writer falls behind (a slow disk) and the queue is full, a connection's records are dropped
//! from the trace and counted — forwarding never waits for the writer. The trace says so: a
//! gap record (format.rs, tag 3) of the connection's dropped records and bytes goes before
//! its next record the queue takes, or at the end of the recording.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::format::{self, Batch, Gap};

/// The default bound of the records waiting for the writer, across connections.
pub const DEFAULT_QUEUE_BYTES: usize = 64 << 20;

/// Records dropped from the trace: per connection, those not yet marked in the trace (a gap
/// still to write) and those in all.
#[derive(Default)]
struct Drops {
    unmarked: BTreeMap<u32, Gap>,
    total: BTreeMap<u32, (u64, u64)>,
}

/// The queue's bound and what it holds (shared by every connection and the writer).
pub struct Budget {
    limit: usize,
    held: AtomicUsize,
    /// Some connection has dropped records not yet marked (the lock is only taken then).
    unmarked: AtomicBool,
    drops: Mutex<Drops>,
    start: Instant,
}

/// What was dropped in all: records, bytes, and per connection (id, records).
pub struct DropSummary {
    pub records: u64,
    pub bytes: u64,
    pub per_conn: Vec<(u32, u64)>,
}

impl Budget {
    pub fn new(limit: usize, start: Instant) -> Budget {
        Budget { limit, held: AtomicUsize::new(0), unmarked: AtomicBool::new(false), drops: Mutex::default(), start }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Drops> {
        self.drops.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `n` bytes of the bound; false (nothing taken) when they do not fit.
    fn take(&self, n: usize) -> bool {
        self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| (h + n <= self.limit).then_some(h + n)).is_ok()
    }

    /// The writer wrote (or discarded) `n` bytes it had been handed.
    pub fn release(&self, n: usize) {
        let _ = self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| Some(h.saturating_sub(n)));
    }

    /// The bytes waiting for the writer now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    fn drop_batch(&self, conn: u32, records: u64, bytes: usize) {
        let t_us = self.start.elapsed().as_micros() as u64;
        let mut d = self.lock();
        let g = d.unmarked.entry(conn).or_insert(Gap { conn, t_us, records: 0, bytes: 0 });
        g.records += records;
        g.bytes += bytes as u64;
        let t = d.total.entry(conn).or_default();
        t.0 += records;
        t.1 += bytes as u64;
        self.unmarked.store(true, Ordering::Release);
    }

    /// Connection `conn`'s gap not yet in the trace, encoded (taken: it is marked now).
    fn take_gap(&self, conn: u32) -> Option<Vec<u8>> {
        if !self.unmarked.load(Ordering::Acquire) {
            return None;
        }
        let mut d = self.lock();
        let g = d.unmarked.remove(&conn)?;
        self.unmarked.store(!d.unmarked.is_empty(), Ordering::Release);
        let mut out = Vec::new();
        format::encode_gap(&g, &mut out);
        Some(out)
    }

    /// Every gap not yet in the trace, to the writer (outside the bound: a few bytes each),
    /// at the end of the recording.
    pub fn mark_all(&self, tx: &Sender<Batch>) {
        let gaps = std::mem::take(&mut self.lock().unmarked);
        self.unmarked.store(false, Ordering::Release);
        let mut out = Vec::new();
        gaps.values().for_each(|g| format::encode_gap(g, &mut out));
        if !out.is_empty() {
            self.held.fetch_add(out.len(), Ordering::AcqRel);
            let _ = tx.send((0, out));
        }
    }

    pub fn summary(&self) -> DropSummary {
        let d = self.lock();
        DropSummary {
            records: d.total.values().map(|t| t.0).sum(),
            bytes: d.total.values().map(|t| t.1).sum(),
            per_conn: d.total.iter().map(|(&c, t)| (c, t.0)).collect(),
        }
    }
}

/// One connection's way to the writer.
#[derive(Clone)]
pub struct ConnTx {
    pub conn: u32,
    tx: Sender<Batch>,
    budget: Arc<Budget>,
}

impl ConnTx {
    pub fn new(conn: u32, tx: Sender<Batch>, budget: Arc<Budget>) -> ConnTx {
        ConnTx { conn, tx, budget }
    }

    /// A connection without a bound (unit tests).
    #[cfg(test)]
    pub fn unbounded(tx: Sender<Batch>) -> ConnTx {
        ConnTx::new(0, tx, Arc::new(Budget::new(usize::MAX, Instant::now())))
    }

    /// Hands `count` records (`recs`) to the writer, after the connection's unmarked gap if
    /// any; when they do not fit in the bound they are dropped and counted. False when the
    /// writer is gone.
    pub fn send(&self, (count, recs): Batch) -> bool {
        if recs.is_empty() {
            return true;
        }
        if !self.budget.take(recs.len()) {
            self.budget.drop_batch(self.conn, count, recs.len());
            return true;
        }
        let batch = match self.budget.take_gap(self.conn) {
            Some(mut gap) => {
                self.budget.held.fetch_add(gap.len(), Ordering::AcqRel);
                gap.extend_from_slice(&recs);
                gap
            }
            None => recs,
        };
        let len = batch.len();
        let sent = self.tx.send((count, batch)).is_ok();
        if !sent {
            self.budget.release(len);
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn records_over_the_bound_are_dropped_counted_and_marked_before_the_next() {
        let (tx, rx) = mpsc::channel();
        let budget = Arc::new(Budget::new(100, Instant::now()));
        let (a, b) = (ConnTx::new(1, tx.clone(), budget.clone()), ConnTx::new(2, tx.clone(), budget.clone()));
        assert!(a.send((1, vec![1; 60])));
        assert!(b.send((2, vec![2; 50])), "dropped, not refused");
        assert!(a.send((1, vec![1; 40])));
        assert_eq!(budget.held(), 100);
        assert!(b.send((3, vec![2; 1])), "the bound is full");
        let s = budget.summary();
        assert_eq!((s.records, s.bytes, s.per_conn), (5, 51, vec![(2, 5)]));
        let (n, got) = rx.try_recv().unwrap();
        assert_eq!((n, got.len()), (1, 60));
        budget.release(got.len());
        rx.try_recv().unwrap();
        assert!(b.send((1, vec![2; 10])));
        let (n, got) = rx.try_recv().unwrap();
        assert_eq!(n, 1);
        // The gap record goes first, then the records.
        assert_eq!(got[0], format::TAG_GAP);
        assert_eq!(&got[got.len() - 10..], &[2; 10]);
        assert_eq!(budget.held(), 40 + got.len());
        assert!(budget.take_gap(2).is_none(), "marked once");
    }

    #[test]
    fn gaps_left_at_the_end_are_marked_then() {
        let (tx, rx) = mpsc::channel();
        let budget = Arc::new(Budget::new(10, Instant::now()));
        let a = ConnTx::new(7, tx.clone(), budget.clone());
        assert!(a.send((3, vec![0; 11])));
        assert!(rx.try_recv().is_err(), "over the bound: nothing sent");
        budget.mark_all(&tx);
        let (n, got) = rx.try_recv().unwrap();
        assert_eq!(n, 0, "a gap is no command");
        let mut buf = Vec::new();
        format::encode_header(&format::Header { version: format::VERSION, flags: 0, start_unix_us: 0 }, &mut buf);
        buf.extend_from_slice(&got);
        let (_, recs, gaps) = format::parse_with_gaps(&buf).unwrap();
        assert!(recs.is_empty());
        assert_eq!((gaps[0].conn, gaps[0].records, gaps[0].bytes), (7, 3, 11));
    }
}
