//! source: what the engine sends. The engine defines these traits and the layers above
//! implement them (the workloads' templates and datasets, memtier's program); it is generic
//! over them, monomorphized, so no request goes through dynamic dispatch, and it imports
//! none of them. A run is in one of two modes: batches (kvload's own) or a window
//! (memtier's); `Infallible` stands for the mode a run does not use.

use std::collections::VecDeque;
use std::convert::Infallible;

/// Where a batch goes: what `Batches::write` needs to route its keys.
pub struct Target<'a> {
    /// Keys are drawn until their slot is the connection's shard's (`Route::Sampled`).
    pub sampled: bool,
    /// Slot → shard (with `sampled`).
    pub owner: &'a [u16],
    /// The connection's shard: its lane of keys.
    pub shard: usize,
    /// Draws of one instance's key before it is sent to whichever node it hashes to.
    pub max_tries: u32,
    /// The slots of the connection's node (cluster mode: `{tag}` is one of theirs).
    pub slots: &'a [u16],
}

/// Batch mode, kvload's own: a connection sends `count` instances of a command sequence at
/// once (written into its buffer in place) and waits for all their replies.
pub trait Batches: Send + Sync {
    /// A thread's generator of what varies between instances (keys, dataset rows).
    type Keys: Clone + Send + Sync;
    /// Commands, so replies, per instance.
    fn commands(&self) -> usize;
    /// The bytes of one instance as encoded (a batch is its instances one after another).
    fn instance_len(&self) -> usize;
    /// A connection's write buffer for `pipeline` instances (sized once: it never grows).
    fn buffer(&self, pipeline: usize) -> Vec<u8>;
    /// Writes `count` instances at the start of `buf`; returns their length in bytes.
    fn write(&self, keys: &mut Self::Keys, buf: &mut [u8], count: usize, to: &Target) -> usize;
    /// The byte range of command `idx` of a batch (an ASK retry, --ack-log).
    fn span(&self, idx: usize) -> (usize, usize);
    /// Gives `keys` one cursor of sequential keys per shard (`Route::Sampled`).
    fn set_lanes(&self, keys: &mut Self::Keys, lanes: usize);
    /// A failover moved lane `from`'s slots to lane `to`: `to` goes on where `from` got.
    fn carry_lane(&self, keys: &mut Self::Keys, from: usize, to: usize);
}

/// Window mode, memtier's: a connection keeps up to `pipeline` single requests in flight,
/// refilled as replies arrive, from its client's stream of requests.
pub trait Window: Send + Sync {
    /// A client's state: where it is in its stream of requests.
    type Client: Clone + Send + Sync;
    /// Cluster mode: a request a client drew for another of its connections (another
    /// primary's), waiting in that connection's queue.
    type Pending: Clone + Send + Sync;
    /// The longest request (sizes the write buffers).
    fn request_len(&self) -> usize;
    /// Result rows: the per-command statistics.
    fn rows(&self) -> usize;
    /// The result row of command `ci`.
    fn row(&self, ci: usize) -> usize;
    /// Appends the client's next request to `out`; returns its command index.
    fn write_next(&self, c: &mut Self::Client, out: &mut Vec<u8>) -> usize;
    /// Cluster mode: appends the client's next request for its connection to `node` (a
    /// queued one first; requests drawn for other nodes are queued for them, within
    /// `budget`); None when there is none for `node`.
    fn write_for_node(&self, c: &mut Self::Client, queues: &mut [VecDeque<Self::Pending>], owner: &[u16], node: usize, budget: &mut u64, out: &mut Vec<u8>) -> Option<usize>;
    /// The reply (complete RESP) to command `ci`: Some(hit) for commands that count hits.
    fn on_reply(&self, c: &mut Self::Client, ci: usize, reply: &[u8]) -> Option<bool>;
}

/// No batches: a run in window mode.
impl Batches for Infallible {
    type Keys = Infallible;
    fn commands(&self) -> usize {
        match *self {}
    }
    fn instance_len(&self) -> usize {
        match *self {}
    }
    fn buffer(&self, _: usize) -> Vec<u8> {
        match *self {}
    }
    fn write(&self, _: &mut Infallible, _: &mut [u8], _: usize, _: &Target) -> usize {
        match *self {}
    }
    fn span(&self, _: usize) -> (usize, usize) {
        match *self {}
    }
    fn set_lanes(&self, _: &mut Infallible, _: usize) {
        match *self {}
    }
    fn carry_lane(&self, _: &mut Infallible, _: usize, _: usize) {
        match *self {}
    }
}

/// No window: a run in batch mode.
impl Window for Infallible {
    type Client = Infallible;
    type Pending = Infallible;
    fn request_len(&self) -> usize {
        match *self {}
    }
    fn rows(&self) -> usize {
        match *self {}
    }
    fn row(&self, _: usize) -> usize {
        match *self {}
    }
    fn write_next(&self, _: &mut Infallible, _: &mut Vec<u8>) -> usize {
        match *self {}
    }
    fn write_for_node(&self, _: &mut Infallible, _: &mut [VecDeque<Infallible>], _: &[u16], _: usize, _: &mut u64, _: &mut Vec<u8>) -> Option<usize> {
        match *self {}
    }
    fn on_reply(&self, _: &mut Infallible, _: usize, _: &[u8]) -> Option<bool> {
        match *self {}
    }
}
