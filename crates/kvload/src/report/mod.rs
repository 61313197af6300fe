//! kvload's report of its results, shared by the front ends: valkey-benchmark's text and
//! CSV output (`text`) and the versioned JSON report (`json`) of `TestResult`s, each run
//! described by a `RunInfo`.
pub mod json;
pub mod result;
pub mod text;

pub use json::{encode_hist, json, report};
pub use result::{RunInfo, TestResult};
pub use text::{print, CSV_HEADER};
