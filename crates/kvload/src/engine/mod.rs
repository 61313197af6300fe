//! The engine: per-thread event loops, statistics, timelines.
pub mod failover;
pub mod reconnect;
pub mod route;
pub mod stats;
pub mod timeline;
pub mod uring_loop;
pub mod worker;
