//! Property tests of what `kvload record`, `replay` and `trace-info` read (issue 41): the
//! reply scanner agrees with `base::resp::skip` on any split of any stream; trace files and
//! MONITOR captures that are truncated, corrupted or of another version give an error naming
//! a byte offset inside the file, never a panic, and what they do load is summarised and
//! planned (`trace-info`, replay's batches and seeding) without a panic either.

use proptest::collection::vec;
use proptest::prelude::*;

use crate::base::fuzz::{config, resp_hostile, resp_value, splits};
use crate::base::resp::{skip, Kind};

use super::file::parse_any;
use super::format::{self, Gap, Header, Record, HEADER_LEN, MAX_ARG_LEN};
use super::replay::{batches, keys_to_seed};
use super::replies::Scanner;

/// Top-level values found (size, push): Ok when the reader took the stream, Err (those
/// found before) when it refused it.
type Found = Result<Vec<(u64, bool)>, Vec<(u64, bool)>>;

/// The top-level values the scanner finds in `stream` fed in the pieces `cuts` makes.
fn scan(stream: &[u8], cuts: &[usize]) -> Found {
    let (mut s, mut done) = (Scanner::default(), Vec::new());
    for w in splits(stream.len(), cuts).windows(2) {
        if s.feed(&stream[w[0]..w[1]], &mut done).is_err() {
            return Err(done);
        }
    }
    Ok(done)
}

/// The values `skip` finds at the start of `stream`, one after another, until it needs
/// more bytes (Ok) or refuses them (Err).
fn skipped(stream: &[u8]) -> Found {
    let (mut pos, mut out) = (0, Vec::new());
    loop {
        match skip(&stream[pos..]) {
            Ok(Some((n, kind))) => {
                out.push((n as u64, kind == Kind::Push));
                pos += n;
            }
            Ok(None) => return Ok(out),
            Err(_) => return Err(out),
        }
    }
}

fn record() -> impl Strategy<Value = Record> {
    let args = vec(vec(any::<u8>(), 0..12), 1..5);
    let reply = proptest::option::of((any::<u64>(), any::<u64>()));
    (any::<u32>(), 0u64..format::MAX_TIME_US, args, reply).prop_map(|(conn, t_us, args, reply)| Record { conn, t_us, args, reply })
}

/// A gap record (`kvload record` dropped records).
fn gap() -> impl Strategy<Value = Gap> {
    (any::<u32>(), 0u64..format::MAX_TIME_US, any::<u64>(), any::<u64>()).prop_map(|(conn, t_us, records, bytes)| Gap { conn, t_us, records, bytes })
}

/// A valid trace: its bytes, its records and gaps, and each record's (or gap's) start
/// offset (then the end of the file).
fn trace() -> impl Strategy<Value = (Vec<u8>, (Vec<Record>, Vec<Gap>), Vec<usize>)> {
    let entry = prop_oneof![4 => record().prop_map(Ok), 1 => gap().prop_map(Err)];
    (0u16..16, any::<u64>(), vec(entry, 0..8)).prop_map(|(flags, start_unix_us, entries)| {
        let mut b = Vec::new();
        format::encode_header(&Header { version: format::VERSION, flags, start_unix_us }, &mut b);
        let (mut starts, mut recs, mut gaps) = (vec![b.len()], Vec::new(), Vec::new());
        for e in entries {
            match e {
                Ok(r) => {
                    let args: Vec<&[u8]> = r.args.iter().map(Vec::as_slice).collect();
                    format::encode_record(r.conn, r.t_us, &args, r.reply, &mut b);
                    recs.push(r);
                }
                Err(g) => {
                    format::encode_gap(&g, &mut b);
                    gaps.push(g);
                }
            }
            starts.push(b.len());
        }
        (b, (recs, gaps), starts)
    })
}

/// A loaded trace is summarised and planned without a panic; seeding stays within the
/// server's bulk limit.
fn use_loaded(buf: &[u8]) -> Result<(), TestCaseError> {
    match parse_any(buf) {
        Ok(t) => {
            let _ = super::info::info(&t);
            let _ = batches(&t.records, true);
            for (_, size) in keys_to_seed(&t.records, 32) {
                prop_assert!(size as u64 <= MAX_ARG_LEN, "a seed value of {} bytes", size);
            }
        }
        Err(e) => prop_assert!(e.offset <= buf.len(), "offset {} past the end ({})", e.offset, buf.len()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_scanner_finds_the_replies_skip_finds_in_any_split(values in vec(resp_value(true), 1..8), cuts in vec(any::<usize>(), 0..10)) {
        let stream = values.concat();
        let want: Vec<(u64, bool)> = values.iter().map(|v| (v.len() as u64, v[0] == b'>')).collect();
        prop_assert_eq!(scan(&stream, &cuts), Ok(want.clone()));
        prop_assert_eq!(skipped(&stream), Ok(want));
    }

    #[test]
    fn on_hostile_bytes_the_scanner_and_skip_agree(b in resp_hostile(), cuts in vec(any::<usize>(), 0..6)) {
        let scanned = scan(&b, &cuts);
        let found = match &scanned { Ok(v) | Err(v) => v.clone() };
        prop_assert!(found.iter().map(|v| v.0).sum::<u64>() <= b.len() as u64);
        let by_skip = skipped(&b);
        let skip_found = match &by_skip { Ok(v) | Err(v) => v.clone() };
        let common = found.len().min(skip_found.len());
        prop_assert_eq!(&found[..common], &skip_found[..common]);
        if let (Ok(a), Ok(b)) = (&scanned, &by_skip) {
            prop_assert_eq!(a, b, "both read the stream whole: the same values");
        }
    }

    #[test]
    fn a_recorded_reply_seeds_within_the_bulk_limit(size in any::<u64>(), digits in 1u64..20) {
        let n = size % 10u64.pow(digits as u32);
        let size = n + 5 + n.to_string().len() as u64; // a bulk reply of n bytes
        let r = Record { conn: 0, t_us: 0, args: vec![b"GET".to_vec(), b"k".to_vec()], reply: Some((size, 1)) };
        for (_, seed) in keys_to_seed(&[r], 32) {
            prop_assert!(seed as u64 <= MAX_ARG_LEN, "a seed value of {} bytes", seed);
        }
    }

    #[test]
    fn a_trace_reads_back_and_every_cut_is_a_shorter_trace_or_an_error_at_its_record((b, (recs, gaps), starts) in trace()) {
        prop_assert_eq!(format::parse_with_gaps(&b).map(|p| (p.1, p.2)), Ok((recs, gaps)));
        for cut in 0..b.len() {
            match format::parse(&b[..cut]) {
                Ok(_) => prop_assert!(starts.contains(&cut), "a cut at {} inside a record read as whole", cut),
                Err(e) if cut < HEADER_LEN => prop_assert!(e.offset <= cut),
                Err(e) => prop_assert_eq!(Some(e.offset), starts.iter().copied().filter(|&s| s <= cut).max()),
            }
        }
    }

    #[test]
    fn a_corrupted_trace_is_an_error_at_an_offset_or_a_trace((mut b, _, _) in trace(), hits in vec((any::<usize>(), any::<u8>()), 1..4)) {
        for (at, v) in hits {
            let i = at % b.len();
            b[i] = v;
        }
        use_loaded(&b)?;
    }

    #[test]
    fn another_version_is_refused_at_byte_8((mut b, _, _) in trace(), v in 2u16..) {
        b[8..10].copy_from_slice(&v.to_le_bytes());
        let e = format::parse(&b).expect_err("another version");
        prop_assert_eq!(e.offset, 8);
    }

    #[test]
    fn any_bytes_after_the_magic_never_panic(tail in vec(any::<u8>(), 0..200)) {
        use_loaded(&[format::MAGIC.as_slice(), &tail].concat())?;
    }

    #[test]
    fn a_monitor_capture_reads_back_and_corruption_is_an_error_at_a_line(lines in vec(monitor_line(), 1..6), hit in (any::<usize>(), any::<u8>())) {
        let text = lines.iter().map(|l| l.0.clone()).collect::<Vec<_>>().concat();
        let recs = parse_any(&text).expect("a valid capture").records;
        let args: Vec<Vec<Vec<u8>>> = recs.iter().filter(|r| r.args[0] != b"SELECT").map(|r| r.args.clone()).collect();
        prop_assert_eq!(args, lines.iter().map(|l| l.1.clone()).collect::<Vec<_>>());
        let mut bad = text.clone();
        bad[hit.0 % text.len()] = hit.1;
        use_loaded(&bad)?;
    }
}

/// A MONITOR line (time, db, client, quoted arguments with escapes) and its arguments.
fn monitor_line() -> impl Strategy<Value = (Vec<u8>, Vec<Vec<u8>>)> {
    let arg = vec(any::<u8>(), 0..8);
    (1_700_000_000u64..1_700_100_000, 0u32..3, 0u16..4, vec(arg, 1..4)).prop_map(|(secs, db, client, args)| {
        let mut l = format!("{secs}.{:06} [{db} 127.0.0.1:{client}]", secs % 1_000_000).into_bytes();
        for a in &args {
            l.extend_from_slice(b" \"");
            for &c in a {
                match c {
                    b'"' | b'\\' => l.extend_from_slice(&[b'\\', c]),
                    0x20..=0x7e => l.push(c),
                    _ => l.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
                }
            }
            l.push(b'"');
        }
        l.push(b'\n');
        (l, args)
    })
}
