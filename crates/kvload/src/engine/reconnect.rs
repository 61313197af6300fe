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

/// Error kinds of the timeline (`timeline.rs`), in report order.
pub const KINDS: [&str; 7] = ["connection", "LOADING", "MASTERDOWN", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "other"];
/// Index in `KINDS` of a lost connection's in-flight requests.
pub const CONNECTION: usize = 0;
const OTHER: usize = KINDS.len() - 1;

/// Default first backoff and its cap (ms).
pub const DEFAULT_BACKOFF_MS: u64 = 100;
/// The backoff doubles after each failed attempt up to this many times the first one.
const CAP_FACTOR: u64 = 8;

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
}
