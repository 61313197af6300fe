//! reconnect: `--reconnect-on-error` (memtier's flag, kvload's own mode). A connection
//! that is lost (reset, EOF, refused) or answered with an error a failover produces
//! (LOADING, MASTERDOWN, READONLY, CLUSTERDOWN, TRYAGAIN) is replaced after a bounded,
//! doubling backoff instead of ending the run. Requests in flight on a lost connection
//! are counted as errors of kind `connection`, never dropped silently.
//!
//! How the load follows a promotion: kvload knows the seed (`-h`/`-p`) plus the nodes
//! of `--fallback HOST:PORT,...`. A connection whose node refuses it, or answers
//! READONLY / MASTERDOWN (a replica), moves on to the next node in that list; so a
//! replica promoted with `REPLICAOF NO ONE` takes the writes once it accepts them.
//! In a cluster (`--cluster`) a connection stays with its shard: when it comes back it
//! reads CLUSTER SLOTS again (from any node that answers) and goes to the node serving
//! its shard's slots now, a replica that took over included.

use std::str::FromStr;

/// Error kinds of the timeline (`timeline.rs`), in report order.
pub const KINDS: [&str; 7] = ["connection", "LOADING", "MASTERDOWN", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "other"];
/// Index in `KINDS` of a lost connection's in-flight requests.
pub const CONNECTION: usize = 0;
const OTHER: usize = KINDS.len() - 1;

/// Default first backoff and its cap (ms).
pub const DEFAULT_BACKOFF_MS: u64 = 100;
/// The backoff doubles after each failed attempt up to this many times the first one.
const CAP_FACTOR: u64 = 8;

/// The options of `--reconnect-on-error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub backoff_ms: u64,
    /// `--fallback`: other nodes to try, after the seed, in this order.
    pub fallback: Vec<(String, u16)>,
    /// `--ack-log FILE`: the keys of acknowledged commands, written at the end.
    pub ack_log: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { backoff_ms: DEFAULT_BACKOFF_MS, fallback: Vec::new(), ack_log: None }
    }
}

/// The kind (index in `KINDS`) of an error reply's text (without the leading '-').
pub fn kind_of(msg: &[u8]) -> usize {
    let word = msg.split(|&b| b == b' ').next().unwrap_or(b"");
    KINDS[1..OTHER].iter().position(|k| k.as_bytes() == word).map_or(OTHER, |p| p + 1)
}

/// What a connection does after an error of `kind` with reconnecting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Keep going (an ordinary error reply such as WRONGTYPE).
    Continue,
    /// Reconnect to the same node after a backoff (it is loading, or the cluster is).
    Retry,
    /// Reconnect to the next node of the list (this one is, or follows, a replica).
    NextNode,
}

pub fn after(kind: usize) -> After {
    match KINDS[kind] {
        "READONLY" | "MASTERDOWN" => After::NextNode,
        "LOADING" | "CLUSTERDOWN" | "TRYAGAIN" | "connection" => After::Retry,
        _ => After::Continue,
    }
}

/// Per-connection reconnect state.
#[derive(Debug, Clone, Default)]
pub struct ConnState {
    /// Down: no stream; a new one is tried at this time (monotonic ns).
    pub retry_at: Option<u64>,
    /// An error reply asked for a reconnect once the batch's replies are all in.
    pub pending: Option<After>,
    /// Failed attempts since the last successful reply (the backoff's exponent).
    failures: u32,
}

impl ConnState {
    pub fn is_down(&self) -> bool {
        self.retry_at.is_some()
    }

    /// Marks the connection down; returns when to try again: `base` × 2^failures,
    /// at most `CAP_FACTOR` × `base` (0.8 s by default).
    pub fn down(&mut self, now: u64, base_ns: u64) -> u64 {
        let factor = 1u64 << self.failures.min(CAP_FACTOR.trailing_zeros());
        self.failures = self.failures.saturating_add(1);
        let at = now + base_ns * factor;
        self.retry_at = Some(at);
        self.pending = None;
        at
    }

    /// A successful reply: the next failure starts from the first backoff again.
    #[inline]
    pub fn ok(&mut self) {
        self.failures = 0;
    }
}

/// `--fallback host:port[,host:port...]`.
pub fn parse_fallback(v: &str) -> Result<Vec<(String, u16)>, String> {
    v.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let s = s.trim();
            let (h, p) = s.rsplit_once(':').ok_or_else(|| format!("invalid --fallback '{s}': expected HOST:PORT"))?;
            let port = u16::from_str(p).map_err(|_| format!("invalid --fallback '{s}': bad port"))?;
            Ok((h.to_string(), port))
        })
        .collect()
}

/// Why these options cannot run together (bad input), or None.
pub fn refusal(o: &crate::frontend::native::options::Options) -> Option<&'static str> {
    if !o.reconnect_on_error {
        let extra = o.reconnect_opts != Options::default();
        return extra.then_some("--reconnect-backoff-ms, --fallback and --ack-log need --reconnect-on-error");
    }
    if o.reconnect_opts.ack_log.is_some() && (o.command.is_empty() || o.dataset.is_some()) {
        return Some("--ack-log needs a custom command (its first argument is the key logged), without --dataset");
    }
    if o.cluster && !o.reconnect_opts.fallback.is_empty() {
        return Some("--fallback is for a standalone run: in a cluster the slot map names the new primary");
    }
    if o.duration.is_none() {
        return Some("--reconnect-on-error needs --duration (a run of -n requests could wait forever for a node)");
    }
    if o.io == crate::base::event_loop::IoChoice::Uring {
        return Some("--reconnect-on-error runs on the epoll loop: drop --io uring");
    }
    if !o.keepalive {
        return Some("--reconnect-on-error cannot be used with -k 0");
    }
    if o.read_from != crate::workload::replicas::ReadFrom::No {
        // its --fallback nodes and the replicas' read routing would share one endpoint list
        return Some("--reconnect-on-error cannot be used with --read-from-replicas yet");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_replies_map_to_their_kind() {
        assert_eq!(KINDS[kind_of(b"READONLY You can't write against a read only replica.")], "READONLY");
        assert_eq!(KINDS[kind_of(b"LOADING Valkey is loading the dataset in memory")], "LOADING");
        assert_eq!(KINDS[kind_of(b"MASTERDOWN Link with MASTER is down")], "MASTERDOWN");
        assert_eq!(KINDS[kind_of(b"CLUSTERDOWN The cluster is down")], "CLUSTERDOWN");
        assert_eq!(KINDS[kind_of(b"TRYAGAIN Multiple keys request during rehashing")], "TRYAGAIN");
        assert_eq!(KINDS[kind_of(b"WRONGTYPE Operation against a key")], "other");
        assert_eq!(KINDS[kind_of(b"READONLYX")], "other");
        assert_eq!(KINDS[kind_of(b"")], "other");
    }

    #[test]
    fn replicas_move_on_loading_retries_others_continue() {
        assert_eq!(after(kind_of(b"READONLY x")), After::NextNode);
        assert_eq!(after(kind_of(b"MASTERDOWN x")), After::NextNode);
        assert_eq!(after(kind_of(b"LOADING x")), After::Retry);
        assert_eq!(after(CONNECTION), After::Retry);
        assert_eq!(after(kind_of(b"ERR syntax")), After::Continue);
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_resets_on_success() {
        let mut s = ConnState::default();
        let base = 100;
        let waits: Vec<u64> = (0..7).map(|_| s.down(1000, base) - 1000).collect();
        assert_eq!(waits, vec![100, 200, 400, 800, 800, 800, 800]);
        assert!(s.is_down());
        s.ok();
        assert_eq!(s.down(0, base), 100);
    }

    #[test]
    fn fallback_lists_parse_and_bad_ones_are_named() {
        assert_eq!(parse_fallback("127.0.0.1:7001, ::1:7002").unwrap(), vec![("127.0.0.1".into(), 7001), ("::1".into(), 7002)]);
        assert!(parse_fallback("localhost").unwrap_err().contains("'localhost'"));
        assert!(parse_fallback("h:99999").unwrap_err().contains("bad port"));
    }
}
