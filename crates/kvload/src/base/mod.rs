//! The bottom layer: the protocol (RESP, cluster slots, URIs), connections (TCP, Unix, TLS,
//! io_uring), clocks, schedules and random numbers. Imports nothing of kvload above it.
pub mod clock;
pub mod event_loop;
pub mod exit;
#[cfg(test)]
pub mod fuzz;
pub mod resp;
#[cfg(test)]
mod resp_props;
pub mod rng;
pub mod schedule;
pub mod session;
pub mod slots;
pub mod tls;
pub mod transport;
pub mod uri;
#[cfg(test)]
mod uri_props;
pub mod uring;
