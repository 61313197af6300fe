//! pubsub: `kvload pubsub` — subscribers and publishers in one process (issue 24).
//! N subscriber connections each SUBSCRIBE (or PSUBSCRIBE, SSUBSCRIBE) to K of M
//! channels; P publisher connections PUBLISH (SPUBLISH when sharded) stamped messages
//! (`payload`) round-robin over the channels, closed loop or at a total rate. Subscribers
//! record publish-to-deliver latency and count lost and duplicated messages; the report is
//! kvload's JSON with a `pubsub` object in its test (docs/KVLOAD.md).
//! options → payload → conn → subscriber, publisher → run.

mod conn;
mod options;
pub mod payload;
mod publisher;
mod run;
mod subscriber;

use crate::base::exit;

/// `kvload pubsub ...`: the process exit code.
pub fn main(argv: &[String]) -> i32 {
    let o = match exit::options(options::parse_args(argv), "pubsub", options::HELP) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match run::run(&o) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kvload pubsub: {e}");
            1
        }
    }
}
