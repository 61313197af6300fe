//! threads: a run of one test — a worker thread per plan, connected first and started
//! together, their statistics merged.

use std::sync::Barrier;

use crate::engine::plan::Plan;
use crate::engine::source::{Batches, Window};
use crate::engine::stats::{self, Merged, ThreadStats};
use crate::engine::worker;

/// Runs one worker thread per plan; their statistics merged at `sigfig` significant figures.
pub fn run<B: Batches, W: Window>(plans: &[Plan<B, W>], sigfig: u8) -> Result<Merged, String> {
    let barrier = Barrier::new(plans.len());
    let parts: Vec<ThreadStats> = std::thread::scope(|s| {
        let handles: Vec<_> = plans.iter().map(|p| s.spawn(|| worker::run(p, &barrier))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if parts.len() != plans.len() {
        return Err("a worker thread failed".into());
    }
    Ok(stats::merge(parts, sigfig))
}
