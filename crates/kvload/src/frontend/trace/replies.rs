//! trace::replies: `kvload record --replies` — each command's reply size and latency.
//!
//! The proxy's upstream → client thread forwards the server's bytes first, then feeds them to
//! a `Scanner` that finds where each top-level RESP2/RESP3 value ends without buffering bulk
//! payloads (it only counts them). A connection's `Matcher` pairs completed replies with its
//! commands in order (the server answers a connection's commands one to one, pipelined or
//! not): the latency is from the client read that carried the command (it is forwarded right
//! after) to the upstream read that completed its reply. Both threads add to the matcher, so
//! a reply that is seen before its command was queued (parsing comes after forwarding) waits
//! for it. RESP3 push messages (`>`) answer no command and are skipped. After a command that
//! ends the one-to-one order (SUBSCRIBE, MONITOR, CLIENT REPLY, …), unparsable bytes, or the
//! end of the connection, the connection's commands are logged without reply information.
//! Paired records wait in the matcher until the connection's next command is forwarded (or
//! matching ends): the hand-off to the writer, which may wake it, then happens while the
//! server works, not between the reply and the client's next request.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use super::format::{self, Record};
use super::queue::ConnTx;

/// Deepest nesting of aggregates the scanner follows (deeper: not a reply it pairs).
pub const MAX_DEPTH: usize = 1024;
/// Bytes a connection's matcher may hold waiting to pair (commands' records, replies'
/// sizes): beyond them its commands are recorded without replies (docs/TRACES.md).
pub const MAX_QUEUED: usize = 16 << 20;
/// What one queued entry costs besides its record's bytes (its slot, its time).
const ENTRY: usize = 48;

/// Finds the ends of top-level RESP values in a byte stream fed in arbitrary pieces.
#[derive(Default)]
pub struct Scanner {
    /// Elements still expected by each open aggregate (arrays, maps, sets, pushes, …).
    stack: Vec<u64>,
    /// Bytes of a bulk payload (and its CRLF) still to skip.
    bulk_left: u64,
    /// A type line read so far (without its end).
    line: Vec<u8>,
    /// Bytes of the current top-level value so far.
    size: u64,
    /// The current top-level value is a RESP3 push (`>`).
    push: bool,
}

/// A completed top-level value: its size in bytes and whether it is a push message.
pub type Value = (u64, bool);

impl Scanner {
    /// Feeds the next bytes; appends each top-level value completed in them to `done`.
    /// Err: not RESP (or a streamed string, which it does not follow).
    pub fn feed(&mut self, mut buf: &[u8], done: &mut Vec<Value>) -> Result<(), String> {
        while !buf.is_empty() {
            if self.bulk_left > 0 {
                let take = self.bulk_left.min(buf.len() as u64);
                self.bulk_left -= take;
                self.size += take;
                buf = &buf[take as usize..];
                if self.bulk_left == 0 {
                    self.element_done(done);
                }
                continue;
            }
            let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
                self.line.extend_from_slice(buf);
                self.size += buf.len() as u64;
                if self.line.len() > 4096 {
                    return Err("a reply line over 4 KiB".into());
                }
                return Ok(());
            };
            self.line.extend_from_slice(&buf[..=nl]);
            self.size += nl as u64 + 1;
            buf = &buf[nl + 1..];
            let line = std::mem::take(&mut self.line);
            let r = self.type_line(&line, done);
            self.line = line;
            self.line.clear();
            r?;
        }
        Ok(())
    }

    /// One complete type line (ending in `\n`).
    fn type_line(&mut self, line: &[u8], done: &mut Vec<Value>) -> Result<(), String> {
        let body = line.strip_suffix(b"\r\n").ok_or("a reply line not ending in CRLF")?;
        let (&kind, rest) = body.split_first().ok_or("an empty reply line")?;
        let count = || -> Result<i64, String> {
            std::str::from_utf8(rest).ok().and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad length in reply line {:?}", String::from_utf8_lossy(body)))
        };
        match kind {
            b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => self.element_done(done),
            b'$' | b'!' | b'=' => match count()? {
                n if n < 0 => self.element_done(done),
                n => self.bulk_left = n as u64 + 2,
            },
            b'*' | b'%' | b'~' | b'>' | b'|' => {
                if kind == b'>' && self.stack.is_empty() {
                    self.push = true;
                }
                let n = count()?;
                // A map's (and an attribute's) elements are pairs; an attribute is followed
                // by the value it describes, which counts as one more element.
                let elements = match kind {
                    b'%' => 2 * n.max(0) as u64,
                    b'|' => 2 * n.max(0) as u64 + 1,
                    _ => n.max(0) as u64,
                };
                if elements == 0 {
                    self.element_done(done);
                } else if self.stack.len() >= MAX_DEPTH {
                    return Err(format!("aggregates nested over {MAX_DEPTH} deep"));
                } else {
                    self.stack.push(elements);
                }
            }
            _ => return Err(format!("not a RESP reply (type byte 0x{kind:02x})")),
        }
        Ok(())
    }

    /// An element ended: close every aggregate it completes, and the top-level value.
    fn element_done(&mut self, done: &mut Vec<Value>) {
        loop {
            let Some(top) = self.stack.last_mut() else {
                done.push((self.size, self.push));
                self.size = 0;
                self.push = false;
                return;
            };
            *top -= 1;
            if *top > 0 {
                return;
            }
            self.stack.pop();
        }
    }
}

/// Commands after which a connection's replies no longer answer its commands one to one.
const UNMATCHED: &[&str] = &["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR", "SYNC", "PSYNC"];

/// Why a trace cannot be replayed with replies matched to commands (None: it can).
pub fn unreplayable(records: &[Record]) -> Option<String> {
    records.iter().enumerate().find_map(|(i, r)| {
        let name = String::from_utf8_lossy(&r.args[0]).to_ascii_uppercase();
        let reply_off = name == "CLIENT" && r.args.get(1).is_some_and(|a| a.eq_ignore_ascii_case(b"REPLY"));
        (UNMATCHED.contains(&name.as_str()) || reply_off).then(|| {
            format!("command {} ({name} on connection {}) makes the server's replies stop answering commands one to one; \
                     replay does not take pub/sub, MONITOR, replication or CLIENT REPLY connections (docs/TRACES.md): drop them from the trace", i + 1, r.conn)
        })
    })
}

/// Whether a command ends the one-to-one order of a connection's replies (as replay refuses).
pub fn breaks_matching(args: &[&[u8]]) -> bool {
    let is = |a: &[u8], w: &str| a.eq_ignore_ascii_case(w.as_bytes());
    let Some(name) = args.first() else { return false };
    UNMATCHED.iter().any(|w| is(name, w)) || (is(name, "CLIENT") && args.get(1).is_some_and(|a| is(a, "REPLY")))
}

struct State {
    /// Encoded records (tag 1) waiting for their reply, with the time they were read.
    cmds: VecDeque<(Vec<u8>, Instant)>,
    /// Replies seen before their command was queued: (size, time seen).
    replies: VecDeque<(u64, Instant)>,
    /// Paired records not yet handed to the writer, and how many.
    done: Vec<u8>,
    done_n: u64,
    matching: bool,
    /// Bytes held in `cmds` and `replies` (see `MAX_QUEUED`), and whether they went over it.
    queued: usize,
    overflowed: bool,
}

/// One connection's command ↔ reply pairing; completed records go to the trace writer in
/// the connection's order.
pub struct Matcher {
    state: Mutex<State>,
    tx: ConnTx,
}

impl Matcher {
    pub fn new(tx: ConnTx) -> Matcher {
        let state = State { cmds: VecDeque::new(), replies: VecDeque::new(), done: Vec::new(), done_n: 0, matching: true, queued: 0, overflowed: false };
        Matcher { state: Mutex::new(state), tx }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Commands of one client read (records encoded without reply), read at `read_at`.
    /// `breaks`: the last of them ends reply matching for this connection.
    pub fn commands(&self, recs: Vec<Vec<u8>>, read_at: Instant, breaks: bool) {
        let mut s = self.lock();
        self.hand_off(&mut s);
        if !s.matching {
            let n = recs.len() as u64;
            self.tx.send((n, recs.concat()));
            return;
        }
        s.queued += recs.iter().map(|r| r.len() + ENTRY).sum::<usize>();
        s.cmds.extend(recs.into_iter().map(|r| (r, read_at)));
        if breaks || self.over(&mut s) {
            self.flush_unmatched(&mut s);
        } else {
            self.pair(&mut s);
        }
    }

    /// The paired records so far, to the writer.
    fn hand_off(&self, s: &mut State) {
        if s.done_n > 0 {
            self.tx.send((s.done_n, std::mem::take(&mut s.done)));
            s.done_n = 0;
        }
    }

    /// Replies (their sizes) completed by one upstream read seen at `seen`.
    pub fn replies(&self, sizes: &[u64], seen: Instant) {
        let mut s = self.lock();
        if s.matching {
            s.queued += sizes.len() * ENTRY;
            s.replies.extend(sizes.iter().map(|&n| (n, seen)));
            self.pair(&mut s);
            if self.over(&mut s) {
                self.flush_unmatched(&mut s);
            }
        }
    }

    /// Whether the queues hold more than `MAX_QUEUED` (then marked as overflowed).
    fn over(&self, s: &mut State) -> bool {
        s.overflowed |= s.queued > MAX_QUEUED;
        s.queued > MAX_QUEUED
    }

    /// Whether pairing ended because the queues went over `MAX_QUEUED`.
    pub fn overflowed(&self) -> bool {
        self.lock().overflowed
    }

    /// Ends matching: queued commands (and later ones) are logged without reply information.
    pub fn stop(&self) {
        let mut s = self.lock();
        self.flush_unmatched(&mut s);
    }

    /// Pairs queued commands with queued replies (kept until the next hand-off).
    fn pair(&self, s: &mut State) {
        while !s.cmds.is_empty() && !s.replies.is_empty() {
            let (Some((mut rec, sent)), Some((size, seen))) = (s.cmds.pop_front(), s.replies.pop_front()) else { break };
            s.queued = s.queued.saturating_sub(rec.len() + 2 * ENTRY);
            let lat = seen.saturating_duration_since(sent).as_micros() as u64;
            format::add_reply(&mut rec, size, lat);
            s.done.extend_from_slice(&rec);
            s.done_n += 1;
        }
    }

    fn flush_unmatched(&self, s: &mut State) {
        self.hand_off(s);
        s.matching = false;
        s.replies = VecDeque::new();
        s.queued = 0;
        if !s.cmds.is_empty() {
            let n = s.cmds.len() as u64;
            let out: Vec<u8> = s.cmds.drain(..).flat_map(|(r, _)| r).collect();
            s.cmds = VecDeque::new();
            self.tx.send((n, out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn scan_all(stream: &[u8], piece: usize) -> Vec<Value> {
        let mut s = Scanner::default();
        let mut done = Vec::new();
        for chunk in stream.chunks(piece) {
            s.feed(chunk, &mut done).unwrap();
        }
        done
    }

    #[test]
    fn finds_resp2_and_resp3_reply_ends_in_any_split() {
        let replies: Vec<&[u8]> = vec![
            b"+OK\r\n",
            b"$5\r\nhello\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b":42\r\n",
            b"-ERR wrong\r\n",
            b"*2\r\n$1\r\na\r\n*2\r\n:1\r\n$0\r\n\r\n",
            b"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n_\r\n",
            b"~2\r\n,1.5\r\n#t\r\n",
            b"|1\r\n+ttl\r\n:3\r\n$2\r\nhi\r\n",
            b"=8\r\ntxt:abcd\r\n",
            b"(123456789012345678901234567890\r\n",
            b"!3\r\nerr\r\n",
        ];
        let push: &[u8] = b">3\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n$0\r\n\r\n";
        let mut stream: Vec<u8> = replies.concat();
        stream.splice(5..5, push.iter().copied());
        let mut want: Vec<Value> = replies.iter().map(|r| (r.len() as u64, false)).collect();
        want.insert(1, (push.len() as u64, true));
        for piece in [1, 2, 3, 7, 64, stream.len()] {
            assert_eq!(scan_all(&stream, piece), want, "fed in pieces of {piece}");
        }
    }

    #[test]
    fn large_bulk_payloads_are_counted_not_buffered() {
        let mut stream = b"$100000\r\n".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 100_000));
        stream.extend_from_slice(b"\r\n+OK\r\n");
        let mut s = Scanner::default();
        let mut done = Vec::new();
        for chunk in stream.chunks(4096) {
            s.feed(chunk, &mut done).unwrap();
            assert!(s.line.capacity() < 4096 * 2, "the payload is not kept");
        }
        assert_eq!(done, vec![(100_011, false), (5, false)]);
    }

    #[test]
    fn garbage_is_an_error() {
        let mut done = Vec::new();
        assert!(Scanner::default().feed(b"hello\r\n", &mut done).is_err());
        assert!(Scanner::default().feed(b"$x\r\n", &mut done).is_err());
    }

    fn rec(key: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        format::encode_record(3, 10, &[b"GET", key], None, &mut r);
        r
    }

    fn parse_records(batches: &[format::Batch]) -> Vec<format::Record> {
        let mut file = Vec::new();
        format::encode_header(&format::Header { version: format::VERSION, flags: format::FLAG_REPLIES, start_unix_us: 0 }, &mut file);
        for (_, b) in batches {
            file.extend_from_slice(b);
        }
        format::parse(&file).unwrap().1
    }

    #[test]
    fn pairs_replies_with_commands_in_order_whichever_comes_first() {
        let (tx, rx) = mpsc::channel();
        let m = Matcher::new(ConnTx::unbounded(tx));
        let t0 = Instant::now();
        m.commands(vec![rec(b"a"), rec(b"b")], t0, false);
        m.replies(&[11], t0 + Duration::from_micros(250));
        // A reply seen before its command was queued waits for it.
        m.replies(&[5, 7], t0 + Duration::from_micros(400));
        m.commands(vec![rec(b"c")], t0 + Duration::from_micros(300), false);
        m.commands(vec![rec(b"d")], t0, false);
        m.stop();
        m.commands(vec![rec(b"e")], t0, false);
        drop(m);
        let got = parse_records(&rx.iter().collect::<Vec<_>>());
        let keys: Vec<&[u8]> = got.iter().map(|r| &r.args[1][..]).collect();
        assert_eq!(keys, vec![&b"a"[..], b"b", b"c", b"d", b"e"]);
        assert_eq!(got[0].reply, Some((11, 250)));
        assert_eq!(got[1].reply, Some((5, 400)));
        assert_eq!(got[2].reply, Some((7, 100)));
        assert_eq!(got[3].reply, None, "no reply was seen before the end");
        assert_eq!(got[4].reply, None, "after the end of matching");
    }

    /// A server that never replies to a client that pipelines: the matcher holds at most
    /// `MAX_QUEUED` bytes, then the commands go to the writer without replies.
    #[test]
    fn a_queue_over_the_cap_ends_pairing() {
        let (tx, rx) = mpsc::channel();
        let m = Matcher::new(ConnTx::unbounded(tx));
        let per = rec(b"k").len() + ENTRY;
        let batches = MAX_QUEUED / per / 1000 + 1;
        for _ in 0..batches {
            m.commands(vec![rec(b"k"); 1000], Instant::now(), false);
        }
        assert!(m.overflowed());
        let got: u64 = rx.try_iter().map(|b| b.0).sum();
        assert_eq!(got, batches as u64 * 1000, "every command reached the writer, none held");
        let (tx, _rx) = mpsc::channel();
        let m = Matcher::new(ConnTx::unbounded(tx));
        m.replies(&vec![5; MAX_QUEUED / ENTRY + 1], Instant::now());
        assert!(m.overflowed(), "replies to no command are bounded too");
    }

    #[test]
    fn a_subscribe_ends_matching_for_the_connection() {
        assert!(breaks_matching(&[b"subscribe", b"ch"]));
        assert!(breaks_matching(&[b"CLIENT", b"reply", b"off"]));
        assert!(!breaks_matching(&[b"CLIENT", b"SETNAME", b"x"]));
        let (tx, rx) = mpsc::channel();
        let m = Matcher::new(ConnTx::unbounded(tx));
        let t0 = Instant::now();
        m.commands(vec![rec(b"a"), rec(b"ch")], t0, true);
        m.replies(&[30, 40], t0);
        m.commands(vec![rec(b"b")], t0, false);
        drop(m);
        let got = parse_records(&rx.iter().collect::<Vec<_>>());
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|r| r.reply.is_none()));
    }
}
