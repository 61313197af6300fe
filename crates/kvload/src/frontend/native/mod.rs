//! kvload's own command line (valkey-benchmark's superset).
pub mod options;
pub mod run;
