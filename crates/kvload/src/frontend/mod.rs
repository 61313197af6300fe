//! The front ends: kvload's own command line, memtier_benchmark's, trace record/replay, pub/sub.
pub mod memtier;
pub mod native;
pub mod pubsub;
pub mod trace;
