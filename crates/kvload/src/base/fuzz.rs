//! fuzz (tests only): the budget of kvload's property tests (issue 41, docs/RELIABILITY.md).
//! `PROPTEST_CASES` sets the cases per property (CI: 256, proptest's default; `scripts/fuzz`:
//! a long budget; `PROPTEST_RNG_SEED` its seed). A failure prints its minimal input; each one
//! found is kept as a plain `#[test]` beside the property. With `KVLOAD_FUZZ_PERSIST` set
//! (`scripts/fuzz` sets it) proptest also keeps a failure's case in
//! crates/kvload/proptest-regressions/<module>.txt and replays the cases kept there first;
//! without it (CI) no file is read or written.

use proptest::test_runner::{Config, FileFailurePersistence};

/// The property tests' configuration: `PROPTEST_CASES` cases (256 when unset).
pub fn config() -> Config {
    let persist = std::env::var_os("KVLOAD_FUZZ_PERSIST").is_some_and(|v| !v.is_empty());
    let failure_persistence = persist.then(|| Box::new(FileFailurePersistence::SourceParallel("proptest-regressions")) as Box<dyn proptest::test_runner::FailurePersistence>);
    Config { failure_persistence, ..Config::default() }
}

use proptest::collection::vec;
use proptest::prelude::*;

/// A bulk-like value: `$`/`!`/`=` with its length line, bytes and CRLF.
fn bulk(t: u8, b: &[u8]) -> Vec<u8> {
    let mut out = format!("{}{}\r\n", t as char, b.len()).into_bytes();
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
    out
}

/// An aggregate: its type byte, count and the encoded elements.
fn aggregate(t: u8, n: usize, items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("{}{n}\r\n", t as char).into_bytes();
    items.iter().for_each(|i| out.extend_from_slice(i));
    out
}

/// Every simple RESP2/RESP3 value: lines, bulks, nulls.
fn resp_leaf() -> BoxedStrategy<Vec<u8>> {
    let line = "[ -~]{0,12}";
    prop_oneof![
        line.prop_map(|s| format!("+{s}\r\n").into_bytes()),
        line.prop_map(|s| format!("-ERR {s}\r\n").into_bytes()),
        any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
        vec(any::<u8>(), 0..40).prop_map(|b| bulk(b'$', &b)),
        vec(any::<u8>(), 0..20).prop_map(|b| bulk(b'!', &b)),
        vec(any::<u8>(), 0..20).prop_map(|b| bulk(b'=', &b)),
        prop_oneof![Just("$-1\r\n"), Just("*-1\r\n"), Just("_\r\n"), Just("#t\r\n"), Just(",1.5\r\n"), Just("(12345678901234567890123\r\n")]
            .prop_map(|s| s.as_bytes().to_vec()),
    ]
    .boxed()
}

/// One valid top-level RESP2/RESP3 value (nested up to 4 deep); `attributes`: with `|`.
pub fn resp_value(attributes: bool) -> BoxedStrategy<Vec<u8>> {
    resp_leaf()
        .prop_recursive(4, 48, 5, move |inner| {
            let pairs = vec((inner.clone(), inner.clone()), 0..3);
            let flat = |p: Vec<(Vec<u8>, Vec<u8>)>| p.into_iter().flat_map(|(k, v)| [k, v]).collect::<Vec<_>>();
            let mut kinds = vec![
                vec(inner.clone(), 0..5).prop_map(|v| aggregate(b'*', v.len(), &v)).boxed(),
                vec(inner.clone(), 0..5).prop_map(|v| aggregate(b'~', v.len(), &v)).boxed(),
                vec(inner.clone(), 1..4).prop_map(|v| aggregate(b'>', v.len(), &v)).boxed(),
                pairs.clone().prop_map(move |p| aggregate(b'%', p.len(), &flat(p))).boxed(),
            ];
            if attributes {
                let attr = (pairs, inner.clone()).prop_map(move |(p, v)| {
                    let mut out = aggregate(b'|', p.len(), &flat(p));
                    out.extend_from_slice(&v);
                    out
                });
                kinds.push(attr.boxed());
            }
            proptest::strategy::Union::new(kinds)
        })
        .boxed()
}

/// Cut points (sorted, within `0..=len`) that split a stream into reads.
pub fn splits(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    at.push(0);
    at.push(len);
    at.sort_unstable();
    at.dedup();
    at
}

/// Hostile RESP: a type byte, a length from the edges of the integers, then bytes.
pub fn resp_hostile() -> BoxedStrategy<Vec<u8>> {
    let types = proptest::sample::select(b"+-:$*%~>|!=_,#(?".to_vec());
    let numbers = prop_oneof![
        Just("9223372036854775807".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-".to_string()),
        Just(String::new()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0u32..10).prop_map(|n| n.to_string()),
    ];
    let head = vec((types, numbers), 1..6).prop_map(|v| {
        v.into_iter().flat_map(|(t, n)| [vec![t], n.into_bytes(), b"\r\n".to_vec()].concat()).collect::<Vec<u8>>()
    });
    prop_oneof![
        vec(any::<u8>(), 0..200),
        (head, vec(any::<u8>(), 0..40)).prop_map(|(h, t)| [h, t].concat()),
        (resp_value(true), any::<usize>(), any::<u8>()).prop_map(|(mut v, at, b)| {
            let i = at % v.len();
            v[i] = b;
            v
        }),
    ]
    .boxed()
}
