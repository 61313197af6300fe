//! resp: zero-allocation RESP2/RESP3 reply skipper (hot path) and a small
//! allocating value parser for setup paths (HELLO, CLUSTER SLOTS), and the encoder of
//! commands (arrays of bulk strings).

/// What a complete top-level reply was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ok,
    /// Out-of-band RESP3 push (not a reply to a command).
    Push,
    /// Error reply; `start..end` is the message (without the type byte) in the input.
    Error { class: ErrClass, start: usize, end: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrClass {
    Err,
    Moved,
    Ask,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

#[inline]
fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 1 < buf.len() {
        if buf[i] == b'\r' && buf[i + 1] == b'\n' {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[inline]
fn parse_int(b: &[u8]) -> Result<i64, ProtocolError> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() {
        return Err(ProtocolError("empty length".into()));
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(ProtocolError(format!("bad length byte 0x{c:02x}")));
        }
        v = v.checked_mul(10).and_then(|v| v.checked_add((c - b'0') as i64)).ok_or_else(|| ProtocolError("length over 64 bits".into()))?;
    }
    Ok(if neg { -v } else { v })
}

/// Deepest nesting `parse_value` follows (it recurses; a deeper reply is an error).
pub const MAX_DEPTH: usize = 512;

pub fn classify(msg: &[u8]) -> ErrClass {
    if msg.starts_with(b"MOVED ") {
        ErrClass::Moved
    } else if msg.starts_with(b"ASK ") {
        ErrClass::Ask
    } else if msg.starts_with(b"ERR") {
        ErrClass::Err
    } else {
        ErrClass::Other
    }
}

/// Skips one complete reply at the start of `buf`.
/// Returns `Ok(None)` if more bytes are needed, else the reply's length and kind.
#[inline]
pub fn skip(buf: &[u8]) -> Result<Option<(usize, Kind)>, ProtocolError> {
    if buf.starts_with(b"+OK\r\n") {
        return Ok(Some((5, Kind::Ok))); // the commonest reply, at a compare's cost
    }
    let mut pos = 0usize;
    let mut need: u64 = 1;
    let mut kind = Kind::Ok;
    let mut first = true;
    while need > 0 {
        let Some(&t) = buf.get(pos) else { return Ok(None) };
        let Some(eol) = find_crlf(buf, pos + 1) else { return Ok(None) };
        let line_start = pos + 1;
        pos = eol + 2;
        need -= 1;
        match t {
            b'+' | b':' | b'_' | b',' | b'#' | b'(' => {}
            b'-' => {
                if first {
                    let class = classify(&buf[line_start..eol]);
                    kind = Kind::Error { class, start: line_start, end: eol };
                }
            }
            b'$' | b'!' | b'=' => {
                let n = parse_int(&buf[line_start..eol])?;
                if n >= 0 {
                    let end = pos + n as usize;
                    if end + 2 > buf.len() {
                        return Ok(None);
                    }
                    if first && t == b'!' {
                        kind = Kind::Error { class: classify(&buf[pos..end]), start: pos, end };
                    }
                    pos = end + 2;
                }
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = parse_int(&buf[line_start..eol])?;
                if first && t == b'>' {
                    kind = Kind::Push;
                }
                if n > 0 {
                    let n = n as u64;
                    let more = match t {
                        b'%' => 2 * n,
                        b'|' => 2 * n + 1,
                        _ => n,
                    };
                    need = need.checked_add(more).ok_or_else(|| ProtocolError("aggregate count over 64 bits".into()))?;
                } else if t == b'|' {
                    need += 1;
                }
            }
            _ => return Err(ProtocolError(format!("unexpected reply type byte 0x{t:02x}"))),
        }
        first = false;
    }
    Ok(Some((pos, kind)))
}

/// One command in RESP: an array of bulk strings.
pub fn encode_args(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(args, &mut out);
    out
}

/// Appends one command in RESP (an array of bulk strings) to `out`.
pub fn encode_into<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Owned reply value for setup paths.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Array(Vec<Value>),
}

impl Value {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Simple(s) => Some(s.clone()),
            Value::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
}

/// Parses one complete reply (caller made sure it is complete via `skip`); a reply cut
/// short, or nested over `MAX_DEPTH`, is an error.
pub fn parse_value(buf: &[u8]) -> Result<(Value, usize), ProtocolError> {
    parse_nested(buf, 0)
}

fn parse_nested(buf: &[u8], depth: usize) -> Result<(Value, usize), ProtocolError> {
    let bad = || ProtocolError("truncated reply".into());
    if depth > MAX_DEPTH {
        return Err(ProtocolError(format!("a reply nested over {MAX_DEPTH} deep")));
    }
    let t = *buf.first().ok_or_else(bad)?;
    let eol = find_crlf(buf, 1).ok_or_else(bad)?;
    let line = &buf[1..eol];
    let text = || String::from_utf8_lossy(line).into_owned();
    let mut pos = eol + 2;
    let v = match t {
        b'+' | b',' | b'(' | b'#' => Value::Simple(text()),
        b'-' => Value::Error(text()),
        b':' => Value::Int(parse_int(line)?),
        b'_' => Value::Nil,
        b'$' | b'=' | b'!' => {
            let n = parse_int(line)?;
            if n < 0 {
                Value::Nil
            } else {
                let end = pos.checked_add(n as usize).ok_or_else(bad)?;
                let data = buf.get(pos..end).ok_or_else(bad)?.to_vec();
                buf.get(end..end + 2).ok_or_else(bad)?;
                pos = end + 2;
                if t == b'!' { Value::Error(String::from_utf8_lossy(&data).into_owned()) } else { Value::Bulk(data) }
            }
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n = parse_int(line)?;
            let n = if t == b'%' { n.saturating_mul(2) } else { n };
            let mut items = Vec::new();
            for _ in 0..n.max(0) {
                let (v, used) = parse_nested(buf.get(pos..).ok_or_else(bad)?, depth + 1)?;
                items.push(v);
                pos += used;
            }
            if n < 0 { Value::Nil } else { Value::Array(items) }
        }
        _ => return Err(ProtocolError(format!("unexpected reply type byte 0x{t:02x}"))),
    };
    Ok((v, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(b: &[u8]) -> (usize, Kind) {
        skip(b).unwrap().unwrap()
    }

    #[test]
    fn resp2_types() {
        assert_eq!(whole(b"+OK\r\n"), (5, Kind::Ok));
        assert_eq!(whole(b":42\r\nxx"), (5, Kind::Ok));
        assert_eq!(whole(b"$3\r\nfoo\r\n"), (9, Kind::Ok));
        assert_eq!(whole(b"$-1\r\n"), (5, Kind::Ok));
        assert_eq!(whole(b"*2\r\n$1\r\na\r\n:1\r\n"), (15, Kind::Ok));
        assert_eq!(whole(b"*-1\r\n"), (5, Kind::Ok));
        assert_eq!(whole(b"*2\r\n*1\r\n+x\r\n*0\r\n"), (16, Kind::Ok));
    }

    #[test]
    fn ok_and_its_look_alikes() {
        assert_eq!(whole(b"+OK\r\n+OK\r\n"), (5, Kind::Ok));
        assert_eq!(whole(b"+OKAY\r\n"), (7, Kind::Ok));
        assert_eq!(skip(b"+OK\r").unwrap(), None);
        assert_eq!(skip(b"+OK").unwrap(), None);
        assert!(matches!(whole(b"-OK\r\n").1, Kind::Error { .. }));
    }

    #[test]
    fn errors() {
        let b = b"-MOVED 3999 127.0.0.1:6381\r\n";
        match whole(b) {
            (n, Kind::Error { class: ErrClass::Moved, start, end }) => {
                assert_eq!(n, b.len());
                assert_eq!(&b[start..end], b"MOVED 3999 127.0.0.1:6381");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(whole(b"-ASK 1 h:1\r\n").1, Kind::Error { class: ErrClass::Ask, .. }));
        assert!(matches!(whole(b"-ERR bad\r\n").1, Kind::Error { class: ErrClass::Err, .. }));
        assert!(matches!(whole(b"-WRONGTYPE x\r\n").1, Kind::Error { class: ErrClass::Other, .. }));
        assert!(matches!(whole(b"!7\r\nERR boo\r\n").1, Kind::Error { class: ErrClass::Err, .. }));
        // an error nested in an array is not a top-level error
        assert_eq!(whole(b"*1\r\n-ERR x\r\n").1, Kind::Ok);
    }

    #[test]
    fn resp3_types() {
        assert_eq!(whole(b"_\r\n"), (3, Kind::Ok));
        assert_eq!(whole(b",3.14\r\n").0, 7);
        assert_eq!(whole(b"#t\r\n").0, 4);
        assert_eq!(whole(b"(123456789012345678901234\r\n").0, 27);
        assert_eq!(whole(b"=8\r\ntxt:abcd\r\n").0, 14);
        let m = b"%2\r\n+a\r\n:1\r\n+b\r\n~1\r\n:2\r\n";
        assert_eq!(whole(m), (m.len(), Kind::Ok));
        let a = b"|1\r\n+key\r\n+val\r\n:5\r\n";
        assert_eq!(whole(a), (a.len(), Kind::Ok));
        let p = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";
        assert_eq!(whole(p), (p.len(), Kind::Push));
    }

    #[test]
    fn split_buffers() {
        let full = b"*3\r\n$3\r\nfoo\r\n%1\r\n+k\r\n$2\r\nvv\r\n:7\r\n+OK\r\n";
        let first_len = full.len() - 5;
        for cut in 0..first_len {
            assert_eq!(skip(&full[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(skip(&full[..first_len]).unwrap(), Some((first_len, Kind::Ok)));
        assert_eq!(skip(&full[first_len..]).unwrap(), Some((5, Kind::Ok)));
    }

    #[test]
    fn garbage() {
        assert!(skip(b"?x\r\n").is_err());
        assert!(skip(b"$x\r\n").is_err());
    }

    /// Found by `resp_props`: a bulk without its CRLF was read as if it had one — at the top
    /// level a length past the input, inside an aggregate a slice past it (a panic).
    #[test]
    fn a_value_never_claims_bytes_past_the_input() {
        assert!(parse_value(b"!0\r\n").is_err());
        assert!(parse_value(b"*2\r\n$1\r\na").is_err());
    }

    /// Found by `frontend::trace::props` (skip against the reply scanner): an aggregate's
    /// count that overflowed the elements still expected ended the reply early; a length of
    /// 20 digits wrapped to a null.
    #[test]
    fn counts_and_lengths_beyond_64_bits_are_errors() {
        assert!(skip(b"*3\r\n%9223372036854775807\r\n").is_err());
        assert!(skip(b"$18446744073709551615\r\n").is_err());
        assert!(parse_value(b":99999999999999999999\r\n").is_err());
    }

    /// Nesting deeper than `MAX_DEPTH` is an error, not a stack overflow.
    #[test]
    fn deep_nesting_is_an_error() {
        let deep = b"*1\r\n".repeat(1_000_000);
        assert!(parse_value(&deep).is_err());
    }

    #[test]
    fn values() {
        let (v, n) = parse_value(b"*2\r\n:1\r\n$3\r\nabc\r\n").unwrap();
        assert_eq!(n, 17);
        assert_eq!(v, Value::Array(vec![Value::Int(1), Value::Bulk(b"abc".to_vec())]));
        assert_eq!(parse_value(b"%1\r\n+a\r\n:1\r\n").unwrap().0, Value::Array(vec![Value::Simple("a".into()), Value::Int(1)]));
    }
}
