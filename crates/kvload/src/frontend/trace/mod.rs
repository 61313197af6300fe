//! trace: record / replay of real traffic (issue 27; docs/TRACES.md).
//! `format` is the file, `monitor` reads MONITOR captures, `record` is the recording proxy,
//! `replay` plays a trace against a server, `info` summarises one as JSON, `replies` pairs
//! replies with commands for `record --replies`.

pub mod format;
pub mod info;
pub mod monitor;
pub mod record;
pub mod replay;
pub mod replies;

use format::{Header, Record, TraceError};

/// A loaded trace (kvload's format or a MONITOR capture), records in file order.
pub struct Trace {
    pub header: Header,
    pub records: Vec<Record>,
    /// The input's SHA-256 is not computed here (kvperf does); the byte size is.
    pub bytes: usize,
}

/// Loads `path`: kvload's binary format by its magic, else a MONITOR capture (a line that
/// starts with a `SECONDS.MICROS [` timestamp). Errors carry the byte offset.
pub fn load(path: &str) -> Result<Trace, String> {
    let buf = std::fs::read(path).map_err(|e| format!("cannot read trace {path}: {e}"))?;
    parse_any(&buf).map_err(|e| format!("bad trace {path}: {e}"))
}

pub fn parse_any(buf: &[u8]) -> Result<Trace, TraceError> {
    if !buf.starts_with(format::MAGIC) && monitor::looks_like(buf) {
        let records = monitor::parse(buf)?;
        let start = monitor::first_unix_us(buf).unwrap_or(0);
        let header = Header { version: format::VERSION, flags: format::FLAG_MONITOR, start_unix_us: start };
        return Ok(Trace { header, records, bytes: buf.len() });
    }
    let (header, records) = format::parse(buf)?;
    Ok(Trace { header, records, bytes: buf.len() })
}
