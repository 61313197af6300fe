//! file: a trace as the commands that read one get it — kvload's binary format, or a
//! MONITOR capture, told apart by the format's magic.

use super::format::{self, Gap, Header, Record, TraceError};
use super::monitor;

/// A loaded trace (kvload's format or a MONITOR capture), records in file order.
pub struct Trace {
    pub header: Header,
    pub records: Vec<Record>,
    /// Records `kvload record` dropped (its writer was behind): the trace is incomplete.
    pub gaps: Vec<Gap>,
    /// The input's SHA-256 is not computed here (kvperf does); the byte size is.
    pub bytes: usize,
}

/// Loads `path`: kvload's binary format by its magic, else a MONITOR capture (a line that
/// starts with a `SECONDS.MICROS [` timestamp). Errors carry the byte offset.
pub fn load(path: &str) -> Result<Trace, String> {
    let buf = std::fs::read(path).map_err(|e| format!("cannot read trace {path}: {e}"))?;
    parse_any(&buf).map_err(|e| format!("bad trace {path}: {e}"))
}

/// A trace from its bytes (see `load`).
pub fn parse_any(buf: &[u8]) -> Result<Trace, TraceError> {
    if !buf.starts_with(format::MAGIC) && monitor::looks_like(buf) {
        let records = monitor::parse(buf)?;
        let start = monitor::first_unix_us(buf).unwrap_or(0);
        let header = Header { version: format::VERSION, flags: format::FLAG_MONITOR, start_unix_us: start };
        return Ok(Trace { header, records, gaps: Vec::new(), bytes: buf.len() });
    }
    let (header, records, gaps) = format::parse_with_gaps(buf)?;
    Ok(Trace { header, records, gaps, bytes: buf.len() })
}
