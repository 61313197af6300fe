//! The engine: per-thread event loops over a plan's connections, their statistics and
//! timelines. It defines what it sends as traits (`source`) that the layers above
//! implement, and the plan (`plan`) their front ends compile their options into.
//!
//! Inside: `source`, `plan`, `route`, `reconnect`, `stats`, `timeline` → `conn` (a thread's
//! connections) → `ring` (io_uring state) → `worker` (the Worker and what both loops share)
//! → its extensions `batch`, `window`, `failover`, `epoll_loop`, `uring_loop` → `threads`.
mod batch;
mod conn;
mod epoll_loop;
mod failover;
pub mod plan;
pub mod reconnect;
mod ring;
pub mod route;
pub mod source;
pub mod stats;
pub mod threads;
pub mod timeline;
mod uring_loop;
mod window;
mod worker;
