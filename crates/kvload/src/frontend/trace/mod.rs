//! trace: record / replay of real traffic (issue 27; docs/TRACES.md).
//! `options` parses the subcommands' argv, `format` is the file, `monitor` reads MONITOR
//! captures, `file` loads either, `replies` pairs replies with commands for `record
//! --replies` (and knows the commands that end that pairing), `record` is the recording
//! proxy, `replay` plays a trace against a server, `info` summarises one as JSON. Each
//! subcommand's `main` is in its module.

pub mod file;
pub mod format;
pub mod info;
pub mod monitor;
pub mod options;
pub mod queue;
#[cfg(test)]
mod props;
pub mod record;
pub mod replay;
pub mod replies;
