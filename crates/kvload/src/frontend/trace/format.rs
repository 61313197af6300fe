//! trace::format: the kvload trace file (docs/TRACES.md) — header, records, writer, reader.
//!
//! Header (24 bytes): magic `KVTRACE\n`, version u16 LE, flags u16 LE, reserved u32 (0),
//! start time u64 LE (µs since the Unix epoch). Records: a tag byte (1 = command,
//! 2 = command + reply size and latency), then LEB128 varints: connection id, send time
//! (µs after the start), argc, and per argument its length and bytes; tag 2 adds the reply's
//! size in bytes and its latency in µs. Tag 3 is a gap: records of one connection that
//! `kvload record` dropped from the trace (its writer was behind and the queue full):
//! connection id, time of the first dropped record, records dropped, their bytes. Only a
//! trace with a gap has one; a reader that predates it refuses it at its offset (a bad tag).

use std::fmt;

/// Whole records encoded one after another, and how many: what the recording proxy hands
/// its trace writer at a time.
pub type Batch = (u64, Vec<u8>);

pub const MAGIC: &[u8; 8] = b"KVTRACE\n";
pub const VERSION: u16 = 1;
pub const HEADER_LEN: usize = 24;
/// Flag: keys and values were replaced by stand-ins (`kvperf trace anonymize`).
pub const FLAG_ANONYMIZED: u16 = 1;
/// Flag: converted from a MONITOR capture (no pipelining boundaries, times at execution).
pub const FLAG_MONITOR: u16 = 2;
/// Flag: recorded with `kvload record --replies` (records whose reply was seen are tag 2).
pub const FLAG_REPLIES: u16 = 4;
/// Flag: anonymized with `--keep-slots` (every stand-in key hashes to its key's cluster slot).
pub const FLAG_KEEP_SLOTS: u16 = 8;
const KNOWN_FLAGS: u16 = FLAG_ANONYMIZED | FLAG_MONITOR | FLAG_REPLIES | FLAG_KEEP_SLOTS;
pub const TAG_CMD: u8 = 1;
pub const TAG_CMD_REPLY: u8 = 2;
pub const TAG_GAP: u8 = 3;
/// Bounds that tell garbage from a command (the server's own limits).
pub const MAX_ARGS: u64 = 1 << 20;
pub const MAX_ARG_LEN: u64 = 512 << 20;
/// The latest time a record may have, in µs after the start (2^42 µs: 50.9 days).
pub const MAX_TIME_US: u64 = 1 << 42;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub version: u16,
    pub flags: u16,
    pub start_unix_us: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub conn: u32,
    pub t_us: u64,
    pub args: Vec<Vec<u8>>,
    /// (reply bytes, latency µs) when the recorder knew them.
    pub reply: Option<(u64, u64)>,
}

/// Records of connection `conn` dropped from a recording from `t_us` on: the trace is
/// incomplete there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Gap {
    pub conn: u32,
    pub t_us: u64,
    pub records: u64,
    pub bytes: u64,
}

/// A parse error at a byte offset of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub offset: usize,
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.msg)
    }
}

pub fn encode_header(h: &Header, out: &mut Vec<u8>) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&h.version.to_le_bytes());
    out.extend_from_slice(&h.flags.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&h.start_unix_us.to_le_bytes());
}

#[inline]
pub fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends one record made of `args` (borrowed slices: the proxy encodes straight from
/// its read buffer).
pub fn encode_record(conn: u32, t_us: u64, args: &[&[u8]], reply: Option<(u64, u64)>, out: &mut Vec<u8>) {
    out.push(if reply.is_some() { TAG_CMD_REPLY } else { TAG_CMD });
    put_varint(conn as u64, out);
    put_varint(t_us, out);
    put_varint(args.len() as u64, out);
    for a in args {
        put_varint(a.len() as u64, out);
        out.extend_from_slice(a);
    }
    if let Some((bytes, lat)) = reply {
        put_varint(bytes, out);
        put_varint(lat, out);
    }
}

/// Appends a gap record.
pub fn encode_gap(g: &Gap, out: &mut Vec<u8>) {
    out.push(TAG_GAP);
    for v in [g.conn as u64, g.t_us, g.records, g.bytes] {
        put_varint(v, out);
    }
}

/// Turns one record encoded without reply (tag 1) into one with it (tag 2).
pub fn add_reply(rec: &mut Vec<u8>, bytes: u64, latency_us: u64) {
    rec[0] = TAG_CMD_REPLY;
    put_varint(bytes, rec);
    put_varint(latency_us, rec);
}

/// Parses the header; the records start at HEADER_LEN.
pub fn parse_header(buf: &[u8]) -> Result<Header, TraceError> {
    let err = |offset: usize, msg: String| TraceError { offset, msg };
    let n = buf.len().min(MAGIC.len());
    if buf[..n] != MAGIC[..n] {
        let at = buf.iter().zip(MAGIC.iter()).position(|(a, b)| a != b).unwrap_or(0);
        return Err(err(at, "not a kvload trace (bad magic; expected \"KVTRACE\\n\")".into()));
    }
    if buf.len() < HEADER_LEN {
        return Err(err(buf.len(), format!("truncated header ({} of {HEADER_LEN} bytes)", buf.len())));
    }
    let version = u16::from_le_bytes([buf[8], buf[9]]);
    if version != VERSION {
        return Err(err(8, format!("unsupported trace version {version} (this kvload reads version {VERSION})")));
    }
    let flags = u16::from_le_bytes([buf[10], buf[11]]);
    if flags & !KNOWN_FLAGS != 0 {
        return Err(err(10, format!("unknown header flags 0x{flags:04x}")));
    }
    if buf[12..16] != [0, 0, 0, 0] {
        return Err(err(12, "reserved header bytes are not zero".into()));
    }
    let mut s = [0u8; 8];
    s.copy_from_slice(&buf[16..24]);
    Ok(Header { version, flags, start_unix_us: u64::from_le_bytes(s) })
}

/// Iterates the records of a whole trace held in memory.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The gap records read so far (the iterator yields commands only).
    pub gaps: Vec<Gap>,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Result<(Header, Reader<'a>), TraceError> {
        let h = parse_header(buf)?;
        Ok((h, Reader { buf, pos: HEADER_LEN, gaps: Vec::new() }))
    }

    /// The offset of the next record.
    #[cfg(test)]
    pub fn offset(&self) -> usize {
        self.pos
    }

    fn varint(&mut self, rec_start: usize, what: &str) -> Result<u64, TraceError> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        let start = self.pos;
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(TraceError {
                    offset: rec_start,
                    msg: format!("truncated record ({what} cut at byte {}, end of file)", self.buf.len()),
                });
            };
            self.pos += 1;
            if shift >= 63 && b > 1 {
                return Err(TraceError { offset: start, msg: format!("{what}: varint overflows 64 bits") });
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    /// The connection id and time every record starts with (after its tag).
    fn conn_and_time(&mut self, start: usize) -> Result<(u32, u64), TraceError> {
        let conn = self.varint(start, "connection id")?;
        if conn > u32::MAX as u64 {
            return Err(TraceError { offset: start, msg: format!("connection id {conn} out of range") });
        }
        let t_us = self.varint(start, "time")?;
        if t_us >= MAX_TIME_US {
            return Err(TraceError { offset: start, msg: format!("time {t_us} µs is past the {} days a trace may span", MAX_TIME_US / 86_400_000_000) });
        }
        Ok((conn as u32, t_us))
    }

    fn gap(&mut self) -> Result<Gap, TraceError> {
        let start = self.pos;
        self.pos += 1;
        let (conn, t_us) = self.conn_and_time(start)?;
        let records = self.varint(start, "records dropped")?;
        let bytes = self.varint(start, "bytes dropped")?;
        Ok(Gap { conn, t_us, records, bytes })
    }

    fn record(&mut self) -> Result<Record, TraceError> {
        let start = self.pos;
        let tag = self.buf[start];
        if tag != TAG_CMD && tag != TAG_CMD_REPLY {
            return Err(TraceError { offset: start, msg: format!("bad record tag 0x{tag:02x} (garbage or a newer format)") });
        }
        self.pos += 1;
        let (conn, t_us) = self.conn_and_time(start)?;
        let argc_at = self.pos;
        let argc = self.varint(start, "argument count")?;
        if argc == 0 || argc > MAX_ARGS {
            return Err(TraceError { offset: argc_at, msg: format!("bad argument count {argc}") });
        }
        let mut args = Vec::with_capacity(argc as usize);
        for i in 0..argc {
            let len_at = self.pos;
            let len = self.varint(start, "argument length")?;
            if len > MAX_ARG_LEN {
                return Err(TraceError { offset: len_at, msg: format!("argument {i} length {len} over 512 MiB") });
            }
            let end = self.pos + len as usize;
            if end > self.buf.len() {
                return Err(TraceError {
                    offset: start,
                    msg: format!("truncated record (argument {i} needs {len} bytes, the file ends at byte {})", self.buf.len()),
                });
            }
            args.push(self.buf[self.pos..end].to_vec());
            self.pos = end;
        }
        let reply = if tag == TAG_CMD_REPLY {
            Some((self.varint(start, "reply size")?, self.varint(start, "reply latency")?))
        } else {
            None
        };
        Ok(Record { conn, t_us, args, reply })
    }
}

impl Iterator for Reader<'_> {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        while self.buf.get(self.pos) == Some(&TAG_GAP) {
            match self.gap() {
                Ok(g) => self.gaps.push(g),
                Err(e) => {
                    self.pos = self.buf.len();
                    return Some(Err(e));
                }
            }
        }
        if self.pos >= self.buf.len() {
            return None;
        }
        let r = self.record();
        if r.is_err() {
            self.pos = self.buf.len();
        }
        Some(r)
    }
}

/// Parses a whole trace (its gaps: `parse_with_gaps`; the tests).
#[cfg(test)]
pub fn parse(buf: &[u8]) -> Result<(Header, Vec<Record>), TraceError> {
    parse_with_gaps(buf).map(|(h, recs, _)| (h, recs))
}

/// Parses a whole trace: its header, records and gaps.
pub fn parse_with_gaps(buf: &[u8]) -> Result<(Header, Vec<Record>, Vec<Gap>), TraceError> {
    let (h, mut r) = Reader::new(buf)?;
    let recs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((h, recs, r.gaps))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut b = Vec::new();
        encode_header(&Header { version: VERSION, flags: FLAG_ANONYMIZED, start_unix_us: 1_700_000_000_123_456 }, &mut b);
        encode_record(0, 0, &[b"SET", b"k:1", b"vvv"], None, &mut b);
        encode_record(7, 300, &[b"GET", b"k:1"], Some((9, 42)), &mut b);
        encode_record(70000, 1 << 40, &[b"PING"], None, &mut b);
        b
    }

    #[test]
    fn round_trip() {
        let b = sample();
        let (h, recs) = parse(&b).unwrap();
        assert_eq!(h, Header { version: 1, flags: FLAG_ANONYMIZED, start_unix_us: 1_700_000_000_123_456 });
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0], Record { conn: 0, t_us: 0, args: vec![b"SET".to_vec(), b"k:1".to_vec(), b"vvv".to_vec()], reply: None });
        assert_eq!(recs[1].reply, Some((9, 42)));
        assert_eq!(recs[1].conn, 7);
        assert_eq!(recs[2].conn, 70000);
        assert_eq!(recs[2].t_us, 1 << 40);
    }

    #[test]
    fn add_reply_turns_a_command_record_into_one_with_its_reply() {
        let mut a = Vec::new();
        encode_record(2, 5, &[b"GET", b"k"], None, &mut a);
        add_reply(&mut a, 300, 70_000);
        let mut b = Vec::new();
        encode_record(2, 5, &[b"GET", b"k"], Some((300, 70_000)), &mut b);
        assert_eq!(a, b);
        let mut f = Vec::new();
        encode_header(&Header { version: VERSION, flags: FLAG_REPLIES | FLAG_KEEP_SLOTS, start_unix_us: 0 }, &mut f);
        f.extend_from_slice(&a);
        assert_eq!(parse(&f).unwrap().1[0].reply, Some((300, 70_000)));
    }

    #[test]
    fn every_truncation_is_an_error_at_the_cut_record() {
        let b = sample();
        // Record boundaries: each record's start offset.
        let mut starts = vec![HEADER_LEN];
        let (_, mut r) = Reader::new(&b).unwrap();
        while let Some(x) = r.next() {
            x.unwrap();
            starts.push(r.offset());
        }
        for cut in 0..b.len() {
            let res = parse(&b[..cut]);
            if starts.contains(&cut) {
                assert!(res.is_ok(), "a cut at a record boundary ({cut}) is a valid shorter trace");
                continue;
            }
            let e = res.expect_err("truncated");
            if cut < HEADER_LEN {
                assert!(e.offset <= cut, "{cut}: {e}");
            } else {
                let rec = *starts.iter().filter(|&&s| s <= cut).max().unwrap();
                assert_eq!(e.offset, rec, "cut at {cut}: {e}");
                assert!(e.msg.contains("truncated"), "{e}");
            }
        }
    }

    /// Found by `props` (a corrupted time): a record time far in the future made
    /// `trace-info` allocate a count per second up to it (out of memory, an abort).
    #[test]
    fn a_time_past_the_limit_is_an_error_at_its_record() {
        let mut b = sample()[..HEADER_LEN].to_vec();
        encode_record(0, MAX_TIME_US, &[b"PING"], None, &mut b);
        let e = parse(&b).unwrap_err();
        assert_eq!(e.offset, HEADER_LEN);
        assert!(e.msg.contains("time"), "{e}");
    }

    #[test]
    fn gaps_read_back_apart_from_the_records() {
        let mut b = sample();
        let g = Gap { conn: 7, t_us: 1 << 30, records: 123_456, bytes: 1 << 33 };
        encode_gap(&g, &mut b);
        encode_record(7, (1 << 30) + 5, &[b"PING"], None, &mut b);
        encode_gap(&Gap { conn: 70000, ..g }, &mut b);
        let (_, recs, gaps) = parse_with_gaps(&b).unwrap();
        assert_eq!(recs.len(), 4);
        // The bytes kvperf's reader is tested with (tests/unit/driver/test_trace_format.py).
        let mut one = Vec::new();
        encode_gap(&Gap { conn: 1, t_us: 5, records: 2, bytes: 300 }, &mut one);
        assert_eq!(one, b"\x03\x01\x05\x02\xac\x02");
        assert_eq!(recs[3].args, vec![b"PING".to_vec()]);
        assert_eq!(gaps, vec![g, Gap { conn: 70000, ..g }]);
        let cut = b.len() - 2;
        let e = parse(&b[..cut]).unwrap_err();
        assert!(e.msg.contains("truncated"), "{e}");
    }

    #[test]
    fn wrong_version_garbage_and_flags() {
        let mut b = sample();
        b[8] = 9;
        let e = parse(&b).unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(e.msg.contains("version 9"), "{e}");
        let e = parse(b"*1\r\n$4\r\nPING\r\n").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.msg.contains("magic"));
        let mut b = sample();
        b.extend_from_slice(b"\xff\xff");
        let e = parse(&b).unwrap_err();
        assert_eq!(e.offset, sample().len());
        assert!(e.msg.contains("tag"), "{e}");
        let mut b = sample();
        b[10] = 0x10;
        assert_eq!(parse(&b).unwrap_err().offset, 10);
        // argc 0
        let mut b = sample()[..HEADER_LEN].to_vec();
        b.extend_from_slice(&[TAG_CMD, 0, 0, 0]);
        let e = parse(&b).unwrap_err();
        assert_eq!(e.offset, HEADER_LEN + 3);
    }
}
