//! The bottom layer: the protocol, sockets, io_uring, clocks.
pub mod clock;
pub mod event_loop;
pub mod resp;
pub mod schedule;
pub mod slots;
pub mod tls;
pub mod transport;
pub mod uri;
pub mod uring;
