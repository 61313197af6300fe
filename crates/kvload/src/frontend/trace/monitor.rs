//! trace::monitor: MONITOR captures (memtier's --monitor-input format) as trace records.
//!
//! A line: `1700000000.123456 [0 127.0.0.1:5555] "SET" "k" "v"`. The client address is the
//! connection; the database number, when it changes on a connection, becomes a SELECT.
//! Lines that are not commands (`OK` after MONITOR, blank lines) are skipped.

use std::collections::HashMap;

use super::format::{Record, TraceError, MAX_TIME_US};

/// Whether `buf` starts (after blank lines or a MONITOR `OK`) with a MONITOR line.
pub fn looks_like(buf: &[u8]) -> bool {
    buf.split(|&b| b == b'\n')
        .map(trim_cr)
        .find(|l| !l.is_empty() && *l != b"OK" && *l != b"+OK")
        .is_some_and(|l| split_head(l).is_some())
}

fn trim_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// (timestamp µs, db, client, rest) of a line.
fn split_head(l: &[u8]) -> Option<(u64, u32, &[u8], &[u8])> {
    let sp = l.iter().position(|&b| b == b' ')?;
    let ts = std::str::from_utf8(&l[..sp]).ok()?;
    let (secs, frac) = ts.split_once('.')?;
    if secs.is_empty() || !secs.bytes().all(|c| c.is_ascii_digit()) || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut micros: String = frac.chars().take(6).collect();
    while micros.len() < 6 {
        micros.push('0');
    }
    let us = secs.parse::<u64>().ok()?.checked_mul(1_000_000)?.checked_add(micros.parse().ok()?)?;
    let rest = l.get(sp + 1..)?;
    if rest.first() != Some(&b'[') {
        return None;
    }
    let close = rest.iter().position(|&b| b == b']')?;
    let inner = &rest[1..close];
    let isp = inner.iter().position(|&b| b == b' ')?;
    let db: u32 = std::str::from_utf8(&inner[..isp]).ok()?.parse().ok()?;
    let client = &inner[isp + 1..];
    Some((us, db, client, rest.get(close + 1..).unwrap_or(b"")))
}

pub fn first_unix_us(buf: &[u8]) -> Option<u64> {
    buf.split(|&b| b == b'\n').find_map(|l| split_head(trim_cr(l))).map(|h| h.0)
}

/// The quoted arguments of a line (MONITOR's escapes: \" \\ \n \r \t \a \b \xHH).
fn args(mut s: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    loop {
        while s.first() == Some(&b' ') {
            s = &s[1..];
        }
        if s.is_empty() {
            return Ok(out);
        }
        if s[0] != b'"' {
            return Err("an argument does not start with '\"'".into());
        }
        let mut a = Vec::new();
        let mut i = 1;
        loop {
            let Some(&c) = s.get(i) else { return Err("unterminated quoted argument".into()) };
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *s.get(i + 1).ok_or("dangling backslash")?;
                    i += 2;
                    match e {
                        b'n' => a.push(b'\n'),
                        b'r' => a.push(b'\r'),
                        b't' => a.push(b'\t'),
                        b'a' => a.push(7),
                        b'b' => a.push(8),
                        b'x' => {
                            let h = s.get(i..i + 2).ok_or("short \\x escape")?;
                            let v = std::str::from_utf8(h).ok().and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or("bad \\x escape")?;
                            a.push(v);
                            i += 2;
                        }
                        other => a.push(other),
                    }
                    continue;
                }
                _ => a.push(c),
            }
            i += 1;
        }
        out.push(a);
        s = &s[i + 1..];
    }
}

/// Parses a capture; times become offsets from the first command's.
pub fn parse(buf: &[u8]) -> Result<Vec<Record>, TraceError> {
    let mut conns: HashMap<Vec<u8>, (u32, u32)> = HashMap::new();
    let mut out = Vec::new();
    let mut first: Option<u64> = None;
    let mut offset = 0usize;
    for raw in buf.split(|&b| b == b'\n') {
        let at = offset;
        offset += raw.len() + 1;
        let l = trim_cr(raw);
        if l.is_empty() || l == b"OK" || l == b"+OK" {
            continue;
        }
        let Some((us, db, client, rest)) = split_head(l) else {
            return Err(TraceError { offset: at, msg: "not a MONITOR line (expected `SECONDS.MICROS [DB ADDR] \"ARG\" ...`)".into() });
        };
        let argv = args(rest).map_err(|m| TraceError { offset: at, msg: m })?;
        if argv.is_empty() {
            return Err(TraceError { offset: at, msg: "a MONITOR line without a command".into() });
        }
        let t0 = *first.get_or_insert(us);
        let t_us = us.saturating_sub(t0);
        if t_us >= MAX_TIME_US {
            return Err(TraceError { offset: at, msg: format!("{t_us} µs after the first line: past the {} days a trace may span", MAX_TIME_US / 86_400_000_000) });
        }
        let next = conns.len() as u32;
        let entry = conns.entry(client.to_vec()).or_insert((next, 0));
        let conn = entry.0;
        if entry.1 != db && !argv[0].eq_ignore_ascii_case(b"SELECT") {
            out.push(Record { conn, t_us, args: vec![b"SELECT".to_vec(), db.to_string().into_bytes()], reply: None });
        }
        entry.1 = db;
        out.push(Record { conn, t_us, args: argv, reply: None });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_memtier_monitor_lines() {
        let cap = b"OK\n1700000000.123456 [0 127.0.0.1:5555] \"SET\" \"k\\\"1\" \"a\\x41\\n\"\r\n\
1700000000.223456 [1 127.0.0.1:6666] \"GET\" \"k\"\n1700000001.5 [0 127.0.0.1:5555] \"PING\"\n";
        assert!(looks_like(cap));
        let r = parse(cap).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].args, vec![b"SET".to_vec(), b"k\"1".to_vec(), b"aA\n".to_vec()]);
        assert_eq!((r[0].conn, r[0].t_us), (0, 0));
        assert_eq!(r[1].args, vec![b"SELECT".to_vec(), b"1".to_vec()]);
        assert_eq!((r[2].conn, r[2].t_us), (1, 100_000));
        assert_eq!(r[3].t_us, 1_376_544);
        assert_eq!(first_unix_us(cap), Some(1_700_000_000_123_456));
    }

    /// Found by `props` (a corrupted timestamp): a capture spanning centuries made
    /// `trace-info` allocate a count per second of it (out of memory, an abort).
    #[test]
    fn a_span_past_the_limit_is_an_error_at_its_line() {
        let cap = b"1700000000.1 [0 a:1] \"PING\"\n9700000000.1 [0 a:1] \"PING\"\n";
        let e = parse(cap).unwrap_err();
        assert_eq!(e.offset, 28);
        assert!(e.msg.contains("days"), "{e}");
    }

    #[test]
    fn bad_line_has_its_offset() {
        let cap = b"1700000000.1 [0 a:1] \"PING\"\nhello\n";
        let e = parse(cap).unwrap_err();
        assert_eq!(e.offset, 28);
        let e = parse(b"1700000000.1 [0 a:1] \"PING\n").unwrap_err();
        assert!(e.msg.contains("unterminated"));
    }
}
