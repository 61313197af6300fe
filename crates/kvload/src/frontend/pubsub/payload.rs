//! pubsub::payload: what a published message carries, and a subscriber's accounting of
//! what it received. Pure: unit-tested without a server.
//!
//! A message is `HEADER_LEN` bytes of header then filler up to the payload size:
//! `KVPS` | publisher (u32 LE) | sequence (u64 LE) | intended send (u64 LE, ns) |
//! actual send (u64 LE, ns). Both times are kvload's monotonic clock: publishers and
//! subscribers are threads of one process, so the subscriber subtracts them directly.

/// Magic bytes that open every kvload pub/sub message.
pub const MAGIC: &[u8; 4] = b"KVPS";
/// Bytes of the header; the smallest payload size kvload accepts.
pub const HEADER_LEN: usize = 32;

/// The header of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub publisher: u32,
    pub seq: u64,
    /// When the publisher meant to send it (the open loop's schedule; the send time in a
    /// closed loop): latency from it is coordinated-omission corrected.
    pub intended_ns: u64,
    pub sent_ns: u64,
}

/// Writes `stamp` then filler into `out` (cleared first), `size` bytes in all
/// (`size` >= HEADER_LEN; the caller checked).
pub fn encode(stamp: &Stamp, size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&stamp.publisher.to_le_bytes());
    out.extend_from_slice(&stamp.seq.to_le_bytes());
    out.extend_from_slice(&stamp.intended_ns.to_le_bytes());
    out.extend_from_slice(&stamp.sent_ns.to_le_bytes());
    out.resize(size.max(HEADER_LEN), b'x');
}

/// The header of a received payload; None when it is not a kvload message (another
/// client published on the channel).
pub fn decode(payload: &[u8]) -> Option<Stamp> {
    if payload.len() < HEADER_LEN || &payload[..4] != MAGIC {
        return None;
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&payload[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let mut p = [0u8; 4];
    p.copy_from_slice(&payload[4..8]);
    Some(Stamp { publisher: u32::from_le_bytes(p), seq: u64_at(8), intended_ns: u64_at(16), sent_ns: u64_at(24) })
}

/// One subscriber's count of what it received. A server delivers one publisher
/// connection's messages to a subscriber in the order it executed them, so per publisher
/// the sequences must rise: a sequence at or below the last one seen is a duplicate.
/// Memory is one number per publisher, whatever the run's length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Per publisher: the last sequence seen + 1 (0: none yet).
    next: Vec<u64>,
    pub unique: u64,
    pub duplicated: u64,
    /// Messages that were not kvload's (no header) or named an unknown publisher.
    pub foreign: u64,
}

impl Tally {
    pub fn new(publishers: usize) -> Self {
        Tally { next: vec![0; publishers], ..Tally::default() }
    }

    /// Counts one received message; true when it is new (not a duplicate).
    pub fn note(&mut self, publisher: u32, seq: u64) -> bool {
        let Some(next) = self.next.get_mut(publisher as usize) else {
            self.foreign += 1;
            return false;
        };
        if seq < *next {
            self.duplicated += 1;
            return false;
        }
        *next = seq + 1;
        self.unique += 1;
        true
    }

    /// Messages published on this subscriber's channels that it did not receive.
    pub fn lost(&self, expected: u64) -> u64 {
        expected.saturating_sub(self.unique)
    }
}

/// Messages a subscriber should receive: the acknowledged publishes on the channels it
/// subscribed to (`published[c]` per channel index).
pub fn expected(channels: &[usize], published: &[u64]) -> u64 {
    channels.iter().map(|&c| published.get(c).copied().unwrap_or(0)).sum()
}

/// The channel indices subscriber `i` subscribes to: `k` consecutive channels starting at
/// `i * k` (mod `m`), so subscribers spread evenly and `k` = 1 is round-robin.
pub fn channels_of(i: usize, k: usize, m: usize) -> Vec<usize> {
    (0..k.min(m)).map(|j| (i * k + j) % m).collect()
}

/// The channel index of publisher `p`'s message `seq`: round-robin from an offset, so
/// every channel gets messages from every publisher.
pub fn channel_for(p: usize, seq: u64, m: usize) -> usize {
    ((p as u64 + seq) % m as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_pads() {
        let s = Stamp { publisher: 7, seq: 1 << 40, intended_ns: 123, sent_ns: 456 };
        let mut buf = Vec::new();
        encode(&s, 128, &mut buf);
        assert_eq!(buf.len(), 128);
        assert_eq!(&buf[..4], b"KVPS");
        assert_eq!(decode(&buf), Some(s));
        encode(&s, 4, &mut buf);
        assert_eq!(buf.len(), HEADER_LEN, "never shorter than the header");
        assert_eq!(decode(&buf), Some(s));
    }

    #[test]
    fn foreign_payloads_are_not_decoded() {
        assert_eq!(decode(b"hello"), None);
        assert_eq!(decode(&[b'x'; 64]), None);
    }

    #[test]
    fn counts_new_duplicated_and_lost() {
        let mut t = Tally::new(2);
        assert!(t.note(0, 0));
        assert!(t.note(0, 5), "gaps are other channels' messages");
        assert!(!t.note(0, 5), "the same message twice");
        assert!(!t.note(0, 3), "a sequence below the last one");
        assert!(t.note(1, 0));
        assert!(!t.note(9, 0), "an unknown publisher");
        assert_eq!((t.unique, t.duplicated, t.foreign), (3, 2, 1));
        assert_eq!(t.lost(5), 2);
        assert_eq!(t.lost(2), 0, "never negative");
    }

    #[test]
    fn expected_sums_the_subscribed_channels() {
        let published = [10, 20, 30];
        assert_eq!(expected(&[0, 2], &published), 40);
        assert_eq!(expected(&[], &published), 0);
    }

    #[test]
    fn channels_spread_round_robin() {
        assert_eq!(channels_of(0, 1, 3), vec![0]);
        assert_eq!(channels_of(4, 1, 3), vec![1]);
        assert_eq!(channels_of(1, 2, 3), vec![2, 0]);
        assert_eq!(channels_of(0, 5, 3), vec![0, 1, 2], "at most every channel once");
        let hits: Vec<usize> = (0..6).map(|s| channel_for(1, s, 3)).collect();
        assert_eq!(hits, vec![1, 2, 0, 1, 2, 0]);
    }
}
