//! The bottom layer: the protocol (RESP, cluster slots, URIs), connections (TCP, Unix, TLS,
//! io_uring), clocks, schedules and random numbers. Imports nothing of kvload above it.
pub mod clock;
pub mod event_loop;
pub mod exit;
pub mod resp;
pub mod rng;
pub mod schedule;
pub mod session;
pub mod slots;
pub mod tls;
pub mod transport;
pub mod uri;
pub mod uring;
