//! memtier program: the commands a memtier run sends (SET/GET by --ratio, or the
//! --command list), pre-encoded as RESP pieces, and the per-client state that
//! picks the next command and writes it into a connection's buffer without
//! allocating (memtier keys are `prefix + number`, so requests vary in length).
//! In cluster mode a client, as memtier's cluster client, has a connection per
//! primary and one stream of requests: each drawn request waits in the queue of the
//! connection its first key hashes to (`write_for_node`).

use std::collections::VecDeque;

use crate::base::slots::key_slot;
use crate::engine::source::Window;

use super::keys::{parallel_range, ClientKeys, KeySpace, Pattern};
use super::options::{scan_cursor_index, MtOptions};

/// One piece of a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Pre-encoded RESP bytes (array header and constant arguments).
    Lit(Vec<u8>),
    /// A generated key: `pre` + key prefix + number + `suf`, as one bulk string.
    Key { pre: Vec<u8>, suf: Vec<u8> },
    /// A value of the configured size, as one bulk string.
    Data,
    /// The client's current SCAN cursor, as one bulk string.
    Cursor,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cmd {
    pub parts: Vec<Part>,
    pub pattern: Pattern,
    /// Times in a row this command is sent before the next (0: never in rotation).
    pub ratio: u32,
    /// Index into `Program::stats`.
    pub stat: usize,
    /// Count hits and misses (nil reply = miss): the GETs of ratio mode.
    pub hits: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub cmds: Vec<Cmd>,
    /// Result rows: ("Sets", "SET") style (JSON/table name, histogram name).
    pub stats: Vec<(String, String)>,
    /// SET/GET by --ratio (the table has Hits/sec and Misses/sec columns).
    pub ratio_mode: bool,
    pub keys: KeySpace,
    pub prefix: Vec<u8>,
    pub data_min: usize,
    pub data_max: usize,
    pub random_data: bool,
    /// P pattern: each client works on its own slice of the key range.
    pub parallel: bool,
    /// --scan-incremental-iteration: cmds[1] is the continuation `SCAN <cursor> ...`.
    pub scan: bool,
    pub scan_max_iterations: u32,
    /// --read-preference: per command, whether it is a read (empty: all to primaries).
    pub reads: Vec<bool>,
    /// --read-preference: per shard (its primary's endpoint index), the endpoints its
    /// reads go to in turn (empty: its primary).
    pub read_nodes: Vec<Vec<usize>>,
}

/// Cluster mode: a request drawn for another primary's connection, waiting for it: its
/// command index and first key number (memtier's per-connection key index pools).
pub type Pending = (u16, u64);
/// Requests one connection's queue holds at most (memtier's KEY_INDEX_QUEUE_MAX_SIZE
/// holds a command and a key index per request in 1,000,000 entries).
pub const PENDING_MAX: usize = 500_000;

/// Longest decimal u64.
const U64_DIGITS: usize = 20;
/// Longest SCAN cursor kept (a u64 in decimal).
const CURSOR_MAX: usize = 20;

/// Per-client state (a client has one connection, one per primary in cluster mode).
#[derive(Debug, Clone)]
pub struct Client {
    pub keys: ClientKeys,
    cmd: usize,
    count: u32,
    value: Vec<u8>,
    mutate: usize,
    cursor: [u8; CURSOR_MAX],
    cursor_len: usize,
    scan_iterations: u32,
    /// A key's bytes, to hash its slot (cluster mode; sized once).
    scratch: Vec<u8>,
    /// --read-preference: reads sent to replicas so far (picks the next one in turn).
    read_turn: usize,
}

fn bulk_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'$');
    put_u64(out, len as u64);
    out.extend_from_slice(b"\r\n");
}

/// Appends `v` in decimal (no allocation).
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; U64_DIGITS];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

fn lit_arg(out: &mut Vec<u8>, arg: &[u8]) {
    bulk_header(out, arg.len());
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// Encodes one command's arguments into parts (constants merged, RESP framed).
fn parts_of(args: &[Vec<u8>], cursor_at: Option<usize>) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut lit = format!("*{}\r\n", args.len()).into_bytes();
    for (i, a) in args.iter().enumerate() {
        let key = (i > 0).then(|| a.windows(7).position(|w| w == b"__key__")).flatten();
        let part = if cursor_at == Some(i) {
            Some(Part::Cursor)
        } else if let Some(k) = key {
            Some(Part::Key { pre: a[..k].to_vec(), suf: a[k + 7..].to_vec() })
        } else if i > 0 && a.as_slice() == b"__data__" {
            Some(Part::Data)
        } else {
            None
        };
        match part {
            Some(p) => {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                parts.push(p);
            }
            None => lit_arg(&mut lit, a),
        }
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    parts
}

/// memtier's row name of a command type: "HSET" → "Hsets".
pub fn row_name(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let mut c = lower.chars();
    match c.next() {
        Some(f) => format!("{}{}s", f.to_ascii_uppercase(), c.as_str()),
        None => "s".into(),
    }
}

impl Program {
    pub fn new(o: &MtOptions) -> Program {
        let mut p = Program {
            cmds: Vec::new(),
            stats: Vec::new(),
            ratio_mode: o.commands.is_empty(),
            keys: KeySpace::new(o.key_min, o.key_max, o.key_stddev, o.key_median, o.key_zipf_exp),
            prefix: o.key_prefix.as_bytes().to_vec(),
            data_min: o.data_size.or(o.data_size_range.map(|r| r.0)).unwrap_or(32),
            data_max: o.data_max(),
            random_data: o.random_data,
            parallel: false,
            scan: o.scan_incremental,
            scan_max_iterations: o.scan_max_iterations,
            reads: Vec::new(),
            read_nodes: Vec::new(),
        };
        if p.ratio_mode {
            p.ratio_commands(o);
        } else if o.scan_incremental {
            p.scan_commands(o);
        } else {
            p.arbitrary_commands(o);
        }
        p.parallel = p.cmds.first().is_some_and(|c| c.pattern == Pattern::Parallel);
        p
    }

    fn ratio_commands(&mut self, o: &MtOptions) {
        let (sets, gets) = o.ratio_or_default();
        let (ps, pg) = o.key_pattern_or_default();
        let words = |s: &str| s.split(' ').map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
        self.stats = vec![("Sets".into(), "SET".into()), ("Gets".into(), "GET".into()), ("Waits".into(), "WAIT".into())];
        self.cmds.push(Cmd { parts: parts_of(&words("SET __key__ __data__"), None), pattern: ps, ratio: sets, stat: 0, hits: false });
        self.cmds.push(Cmd { parts: parts_of(&words("GET __key__"), None), pattern: pg, ratio: gets, stat: 1, hits: true });
    }

    /// Stats are by command type (first word), merged across commands of one type.
    fn arbitrary_commands(&mut self, o: &MtOptions) {
        for c in &o.commands {
            let kind = String::from_utf8_lossy(&c.args[0]).to_ascii_uppercase();
            let stat = match self.stats.iter().position(|s| s.1 == kind) {
                Some(i) => i,
                None => {
                    self.stats.push((row_name(&kind), kind));
                    self.stats.len() - 1
                }
            };
            self.cmds.push(Cmd { parts: parts_of(&c.args, None), pattern: c.pattern, ratio: c.ratio, stat, hits: false });
        }
    }

    /// `SCAN 0 ...` (stats "SCAN 0") and the continuation `SCAN <cursor> ...` ("SCAN <cursor>").
    fn scan_commands(&mut self, o: &MtOptions) {
        let c = &o.commands[0];
        let name = String::from_utf8_lossy(&c.args[0]).to_ascii_uppercase();
        let (first, next) = (format!("{name} 0"), format!("{name} <cursor>"));
        self.stats = vec![(row_name(&first), first), (row_name(&next), next)];
        let at = scan_cursor_index(&c.args[0]).unwrap_or(1);
        self.cmds.push(Cmd { parts: parts_of(&c.args, None), pattern: c.pattern, ratio: 1, stat: 0, hits: false });
        self.cmds.push(Cmd { parts: parts_of(&c.args, Some(at)), pattern: c.pattern, ratio: 0, stat: 1, hits: false });
    }

    /// Upper bound of one request's length (sizes the write buffers).
    pub fn max_request_len(&self) -> usize {
        let bulk = |n: usize| 1 + U64_DIGITS + 2 + n + 2;
        self.cmds
            .iter()
            .map(|c| {
                c.parts
                    .iter()
                    .map(|p| match p {
                        Part::Lit(b) => b.len(),
                        Part::Key { pre, suf } => bulk(pre.len() + self.prefix.len() + U64_DIGITS + suf.len()),
                        Part::Data => bulk(self.data_max),
                        Part::Cursor => bulk(CURSOR_MAX),
                    })
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(0)
    }

    /// Client `index` of `total`, seeded with `seed` (memtier: the same seed for
    /// every client unless --distinct-client-seed).
    pub fn client(&self, seed: u64, index: u64, total: u64) -> Client {
        let (min, max) = if self.parallel {
            parallel_range(self.keys.min, self.keys.max, index, total)
        } else {
            (self.keys.min, self.keys.max)
        };
        let mut keys = ClientKeys::new(seed, min, max, self.cmds.len());
        let value = if self.random_data {
            (0..self.data_max).map(|_| keys.rng.next() as u8).collect()
        } else {
            vec![b'x'; self.data_max]
        };
        let scratch = Vec::with_capacity(self.max_request_len());
        let mut c = Client { keys, cmd: 0, count: 0, value, mutate: 0, cursor: [b'0'; CURSOR_MAX], cursor_len: 1, scan_iterations: 0, scratch, read_turn: 0 };
        self.advance(&mut c);
        c
    }

    /// memtier's rotation: each command `ratio` times in a row, then the next.
    fn advance(&self, c: &mut Client) {
        for _ in 0..=2 * self.cmds.len() {
            if c.count < self.cmds[c.cmd].ratio {
                c.count += 1;
                return;
            }
            c.count = 0;
            c.cmd = (c.cmd + 1) % self.cmds.len();
        }
    }

    /// Index of the command the client sends next.
    #[inline]
    pub fn peek(&self, c: &Client) -> usize {
        if self.scan && !(c.cursor_len == 1 && c.cursor[0] == b'0') {
            1
        } else {
            c.cmd
        }
    }

    /// Writes the client's next request into `out`; returns its command index.
    #[inline]
    pub fn write_next(&self, c: &mut Client, out: &mut Vec<u8>) -> usize {
        let ci = self.peek(c);
        self.write(ci, c, out, None);
        if ci == c.cmd {
            self.advance(c);
        }
        ci
    }

    /// Cluster mode, as memtier's cluster client: writes the client's next request for
    /// its connection to primary `node` into `out` and returns its command index. A
    /// request queued for `node` goes first; else requests are drawn in turn (at most
    /// `budget` more: its -n), each whose first key hashes to another primary (`owner`:
    /// slot → primary) queued for that primary's connection, until one is `node`'s or
    /// has no key. None: nothing for `node` (budget spent, or a queue is full).
    pub fn write_for_node(&self, c: &mut Client, queues: &mut [VecDeque<Pending>], owner: &[u16], node: usize, budget: &mut u64, out: &mut Vec<u8>) -> Option<usize> {
        loop {
            if let Some((ci, key)) = queues.get_mut(node).and_then(VecDeque::pop_front) {
                self.write(ci as usize, c, out, Some(key));
                return Some(ci as usize);
            }
            if *budget == 0 {
                return None;
            }
            let ci = self.peek(c);
            let key = self.draw_first_key(ci, c);
            let target = key.map_or(node, |k| owner.get(self.slot_of(ci, k, &mut c.scratch) as usize).map_or(node, |&n| n as usize));
            let target = self.read_target(ci, target, c);
            if target != node && queues.get(target).is_some_and(|q| q.len() >= PENDING_MAX) {
                return None;
            }
            *budget -= 1;
            if ci == c.cmd {
                self.advance(c);
            }
            match key {
                Some(k) if target != node => queues[target].push_back((ci as u16, k)),
                _ => {
                    self.write(ci, c, out, key);
                    return Some(ci);
                }
            }
        }
    }

    /// --read-preference: a read's endpoint among its shard's read endpoints (in turn);
    /// anything else stays with `target`.
    fn read_target(&self, ci: usize, target: usize, c: &mut Client) -> usize {
        if !self.reads.get(ci).copied().unwrap_or(false) {
            return target;
        }
        match self.read_nodes.get(target) {
            Some(list) if !list.is_empty() => {
                c.read_turn = c.read_turn.wrapping_add(1);
                list[c.read_turn % list.len()]
            }
            _ => target,
        }
    }

    /// Command names as the server knows them, one per entry of `cmds` (COMMAND INFO).
    pub fn command_names(o: &MtOptions) -> Vec<Vec<u8>> {
        if o.commands.is_empty() {
            return vec![b"SET".to_vec(), b"GET".to_vec()];
        }
        let n = if o.scan_incremental { 2 } else { o.commands.len() };
        (0..n).map(|i| o.commands[if o.scan_incremental { 0 } else { i }].args[0].clone()).collect()
    }

    /// The number of command `ci`'s first key, drawn (None: the command has no key).
    fn draw_first_key(&self, ci: usize, c: &mut Client) -> Option<u64> {
        let cmd = &self.cmds[ci];
        cmd.parts.iter().any(|p| matches!(p, Part::Key { .. })).then(|| c.keys.next(&self.keys, cmd.pattern, ci))
    }

    /// Hash slot of command `ci`'s first key with number `k` (its bytes built in `scratch`).
    fn slot_of(&self, ci: usize, k: u64, scratch: &mut Vec<u8>) -> u16 {
        scratch.clear();
        if let Some(Part::Key { pre, suf }) = self.cmds[ci].parts.iter().find(|p| matches!(p, Part::Key { .. })) {
            scratch.extend_from_slice(pre);
            scratch.extend_from_slice(&self.prefix);
            put_u64(scratch, k);
            scratch.extend_from_slice(suf);
        }
        key_slot(scratch)
    }

    /// Writes command `ci`, its first key numbered `first` when given (else drawn).
    fn write(&self, ci: usize, c: &mut Client, out: &mut Vec<u8>, mut first: Option<u64>) {
        let cmd = &self.cmds[ci];
        for p in &cmd.parts {
            match p {
                Part::Lit(b) => out.extend_from_slice(b),
                Part::Key { pre, suf } => {
                    let k = first.take().unwrap_or_else(|| c.keys.next(&self.keys, cmd.pattern, ci));
                    bulk_header(out, pre.len() + self.prefix.len() + digits(k) + suf.len());
                    out.extend_from_slice(pre);
                    out.extend_from_slice(&self.prefix);
                    put_u64(out, k);
                    out.extend_from_slice(suf);
                    out.extend_from_slice(b"\r\n");
                }
                Part::Data => {
                    let n = if self.data_min == self.data_max {
                        self.data_max
                    } else {
                        c.keys.range(self.data_min as u64, self.data_max as u64) as usize
                    };
                    self.mutate_value(c);
                    bulk_header(out, n);
                    out.extend_from_slice(&c.value[..n]);
                    out.extend_from_slice(b"\r\n");
                }
                Part::Cursor => lit_arg(out, &c.cursor[..c.cursor_len]),
            }
        }
    }

    /// --random-data: one byte changes per value; the whole buffer is redrawn after a lap.
    fn mutate_value(&self, c: &mut Client) {
        if !self.random_data || c.value.is_empty() {
            return;
        }
        c.value[c.mutate] = c.value[c.mutate].wrapping_add(1);
        c.mutate += 1;
        if c.mutate >= c.value.len() {
            c.mutate = 0;
            for b in c.value.iter_mut() {
                *b = c.keys.rng.next() as u8;
            }
        }
    }

    /// Reply to command `ci` (complete RESP bytes): follows SCAN cursors.
    /// Returns Some(hit) for commands that count hits and misses.
    #[inline]
    pub fn on_reply(&self, c: &mut Client, ci: usize, reply: &[u8]) -> Option<bool> {
        if self.scan {
            self.follow_cursor(c, ci, reply);
        }
        self.cmds[ci].hits.then(|| !(reply.starts_with(b"$-1") || reply.starts_with(b"_")))
    }

    /// memtier: the cursor is the first element of the reply; "0", an error, or
    /// --scan-incremental-max-iterations continuations restart at SCAN 0.
    fn follow_cursor(&self, c: &mut Client, ci: usize, reply: &[u8]) {
        let cursor = scan_cursor(reply).filter(|v| v.len() <= CURSOR_MAX && !v.is_empty());
        match cursor {
            Some(v) => {
                c.cursor[..v.len()].copy_from_slice(v);
                c.cursor_len = v.len();
            }
            None => self.reset_cursor(c),
        }
        if ci == 1 {
            c.scan_iterations += 1;
        }
        let done = c.cursor_len == 1 && c.cursor[0] == b'0';
        if done || (self.scan_max_iterations > 0 && c.scan_iterations >= self.scan_max_iterations) {
            self.reset_cursor(c);
        }
    }

    fn reset_cursor(&self, c: &mut Client) {
        c.cursor[0] = b'0';
        c.cursor_len = 1;
        c.scan_iterations = 0;
    }
}

/// The engine's window mode sends the program's requests (`Worker`'s refills).
impl Window for Program {
    type Client = Client;
    type Pending = Pending;

    fn request_len(&self) -> usize {
        self.max_request_len()
    }

    fn rows(&self) -> usize {
        self.stats.len()
    }

    #[inline]
    fn row(&self, ci: usize) -> usize {
        self.cmds[ci].stat
    }

    #[inline]
    fn write_next(&self, c: &mut Client, out: &mut Vec<u8>) -> usize {
        Program::write_next(self, c, out)
    }

    #[inline]
    fn write_for_node(&self, c: &mut Client, queues: &mut [VecDeque<Pending>], owner: &[u16], node: usize, budget: &mut u64, out: &mut Vec<u8>) -> Option<usize> {
        Program::write_for_node(self, c, queues, owner, node, budget, out)
    }

    #[inline]
    fn on_reply(&self, c: &mut Client, ci: usize, reply: &[u8]) -> Option<bool> {
        Program::on_reply(self, c, ci, reply)
    }
}

/// The first bulk string of a `*2\r\n$n\r\ncursor\r\n...` reply.
fn scan_cursor(reply: &[u8]) -> Option<&[u8]> {
    let rest = reply.strip_prefix(b"*")?;
    let nl = rest.windows(2).position(|w| w == b"\r\n")?;
    let rest = rest[nl + 2..].strip_prefix(b"$")?;
    let nl = rest.windows(2).position(|w| w == b"\r\n")?;
    let n: usize = std::str::from_utf8(&rest[..nl]).ok()?.parse().ok()?;
    rest.get(nl + 2..nl + 2 + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::memtier::options::{parse, MtParsed};

    fn opts(args: &[&str]) -> MtOptions {
        match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()) {
            Ok(MtParsed::Run(o)) => *o,
            other => panic!("{other:?}"),
        }
    }

    fn program(args: &[&str]) -> Program {
        Program::new(&opts(args))
    }

    fn requests(p: &Program, c: &mut Client, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                let mut out = Vec::with_capacity(p.max_request_len());
                let cap = out.capacity();
                p.write_next(c, &mut out);
                assert!(out.len() <= cap && out.capacity() == cap, "request exceeds max_request_len");
                String::from_utf8_lossy(&out).into_owned()
            })
            .collect()
    }

    #[test]
    fn ratio_mode_sends_sets_then_gets() {
        let p = program(&["--ratio", "1:3", "--key-pattern", "S:S", "--key-minimum", "1", "--key-maximum", "100", "-d", "4"]);
        let mut c = p.client(0, 0, 1);
        let r = requests(&p, &mut c, 8);
        assert_eq!(r[0], "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-1\r\n$4\r\nxxxx\r\n");
        assert_eq!(r[1], "*2\r\n$3\r\nGET\r\n$9\r\nmemtier-1\r\n");
        assert_eq!(r[2], "*2\r\n$3\r\nGET\r\n$9\r\nmemtier-2\r\n");
        assert!(r[4].starts_with("*3\r\n$3\r\nSET\r\n$9\r\nmemtier-2\r\n"));
        assert_eq!(p.stats[0].0, "Sets");
        assert_eq!(p.on_reply(&mut c, 1, b"$-1\r\n"), Some(false));
        assert_eq!(p.on_reply(&mut c, 1, b"$1\r\nx\r\n"), Some(true));
        assert_eq!(p.on_reply(&mut c, 0, b"+OK\r\n"), None);
        let p = program(&["--ratio", "0:1"]);
        let mut c = p.client(0, 0, 1);
        assert!(requests(&p, &mut c, 5).iter().all(|r| r.contains("GET")));
    }

    #[test]
    fn command_ratio_repeats_then_moves_on() {
        let p = program(&["--command", "HSET __key__ f __data__", "--command-ratio", "2", "--command", "HGET __key__ f", "--command", "PING", "--command-ratio", "0"]);
        let mut c = p.client(0, 0, 1);
        let names: Vec<String> = requests(&p, &mut c, 6).iter().map(|r| r.split("\r\n").nth(2).unwrap_or("").to_string()).collect();
        assert_eq!(names, ["HSET", "HSET", "HGET", "HSET", "HSET", "HGET"]);
        assert_eq!(p.stats.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["Hsets", "Hgets", "Pings"]);
    }

    #[test]
    fn key_affixes_and_every_key_drawn() {
        let p = program(&["--command", "MSET a{__key__}b __data__ __key__ __data__", "--command-key-pattern", "S", "--key-prefix", "", "--key-minimum", "5", "-d", "2"]);
        let mut c = p.client(0, 0, 1);
        let r = &requests(&p, &mut c, 1)[0];
        assert_eq!(r, "*5\r\n$4\r\nMSET\r\n$5\r\na{5}b\r\n$2\r\nxx\r\n$1\r\n6\r\n$2\r\nxx\r\n");
    }

    #[test]
    fn parallel_clients_get_slices_and_same_seed_repeats() {
        let p = program(&["--ratio", "1:0", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "1000"]);
        let mut c = p.client(0, 3, 4);
        assert!(requests(&p, &mut c, 1)[0].contains("memtier-751\r\n"));
        let p = program(&["--ratio", "1:0", "--data-size-range", "1-100", "-R"]);
        let (mut a, mut b) = (p.client(9, 0, 2), p.client(9, 1, 2));
        assert_eq!(requests(&p, &mut a, 20), requests(&p, &mut b, 20), "same seed, same keys (memtier default)");
        let mut d = p.client(10, 1, 2);
        assert_ne!(requests(&p, &mut a, 20), requests(&p, &mut d, 20));
    }

    #[test]
    fn scan_follows_the_cursor() {
        let p = program(&["--command", "SCAN 0 COUNT 10", "--scan-incremental-iteration"]);
        let mut c = p.client(0, 0, 1);
        assert_eq!(requests(&p, &mut c, 1)[0], "*4\r\n$4\r\nSCAN\r\n$1\r\n0\r\n$5\r\nCOUNT\r\n$2\r\n10\r\n");
        p.on_reply(&mut c, 0, b"*2\r\n$2\r\n17\r\n*0\r\n");
        assert_eq!(requests(&p, &mut c, 1)[0], "*4\r\n$4\r\nSCAN\r\n$2\r\n17\r\n$5\r\nCOUNT\r\n$2\r\n10\r\n");
        assert_eq!(p.peek(&c), 1);
        p.on_reply(&mut c, 1, b"*2\r\n$1\r\n0\r\n*0\r\n");
        assert_eq!(p.peek(&c), 0);
        p.on_reply(&mut c, 0, b"-ERR x\r\n");
        assert_eq!(p.peek(&c), 0);
        assert_eq!(p.stats[1].0, "Scan <cursor>s");
        let p = program(&["--command", "ZSCAN z __key__ COUNT 5", "--command-key-pattern", "S", "--key-minimum", "3", "--scan-incremental-iteration"]);
        let mut c = p.client(0, 0, 1);
        assert_eq!(requests(&p, &mut c, 1)[0], "*5\r\n$5\r\nZSCAN\r\n$1\r\nz\r\n$9\r\nmemtier-3\r\n$5\r\nCOUNT\r\n$1\r\n5\r\n");
        p.on_reply(&mut c, 0, b"*2\r\n$2\r\n17\r\n*0\r\n");
        assert_eq!(requests(&p, &mut c, 1)[0], "*5\r\n$5\r\nZSCAN\r\n$1\r\nz\r\n$2\r\n17\r\n$5\r\nCOUNT\r\n$1\r\n5\r\n");
        assert_eq!((p.stats[0].1.as_str(), p.stats[1].0.as_str()), ("ZSCAN 0", "Zscan <cursor>s"));
    }

    #[test]
    fn cluster_requests_wait_for_their_primarys_connection() {
        let p = program(&["--ratio", "1:0", "--key-pattern", "S:S", "--key-minimum", "1", "--key-maximum", "100000"]);
        let mut c = p.client(0, 0, 1);
        let owner: Vec<u16> = (0..crate::base::slots::SLOTS).map(|s| (s * 3 / crate::base::slots::SLOTS) as u16).collect();
        let mut queues = vec![VecDeque::new(); 3];
        let mut budget = 60;
        let mut sent: Vec<(usize, u64)> = Vec::new();
        // Connections take turns (node 2 first) until nothing is left for any of them.
        for node in (0..3).cycle().skip(2) {
            let mut out = Vec::new();
            match p.write_for_node(&mut c, &mut queues, &owner, node, &mut budget, &mut out) {
                Some(0) => {
                    let text = String::from_utf8_lossy(&out).into_owned();
                    let key = text.split("\r\n").nth(4).unwrap_or("").to_string();
                    assert_eq!(owner[key_slot(key.as_bytes()) as usize] as usize, node, "{key}");
                    sent.push((node, key.trim_start_matches("memtier-").parse().unwrap_or(0)));
                }
                other => {
                    assert_eq!(other, None);
                    if queues.iter().all(VecDeque::is_empty) {
                        break;
                    }
                }
            }
        }
        let mut keys: Vec<u64> = sent.iter().map(|s| s.1).collect();
        keys.sort_unstable();
        assert_eq!(keys, (1..=60).collect::<Vec<_>>(), "one stream: every drawn key sent once, by its primary's connection");
        assert!((0..3).all(|n| sent.iter().any(|s| s.0 == n)));
    }

    #[test]
    fn reads_go_to_their_shards_replica_and_writes_to_its_primary() {
        let mut p = program(&["--ratio", "1:1"]);
        (p.reads, p.read_nodes) = (vec![false, true], vec![vec![1]]);
        let mut c = p.client(0, 0, 1);
        let owner = vec![0u16; crate::base::slots::SLOTS];
        let mut queues = vec![VecDeque::new(); 2];
        let mut budget = 40;
        let mut by_node = [Vec::new(), Vec::new()];
        for node in (0..2).cycle().take(200) {
            let mut out = Vec::new();
            if let Some(ci) = p.write_for_node(&mut c, &mut queues, &owner, node, &mut budget, &mut out) {
                by_node[node].push(ci);
            }
        }
        assert_eq!((by_node[0].len(), by_node[1].len()), (20, 20));
        assert!(by_node[0].iter().all(|&ci| ci == 0) && by_node[1].iter().all(|&ci| ci == 1), "{by_node:?}");
        assert_eq!(Program::command_names(&opts(&["--command", "HGET h __key__"])), vec![b"HGET".to_vec()]);
    }
}
