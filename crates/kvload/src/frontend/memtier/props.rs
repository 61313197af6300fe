//! Property tests of memtier's argv (issue 41): any argv is a refusal (a message) or a run
//! whose plan is built — the report's description, the requests per client, the program
//! and every thread's plan, a few requests of each client within `max_request_len` —
//! never a panic.

use std::sync::Arc;

use proptest::collection::vec;
use proptest::prelude::*;

use crate::base::event_loop::{IoKind, IoUsed};
use crate::base::fuzz::config;
use crate::base::transport::{ConnectSpec, Endpoint};

use super::options::{parse, MtOptions, MtParsed};
use super::plan::{plans, run_info, Setup};
use super::program::Program;
use super::table::TABLE;

/// Values memtier options get: numbers at the edges, patterns, commands, words.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![Just("0"), Just("1"), Just("2"), Just("-1"), Just("4294967295"), Just("4294967296"), Just("18446744073709551615"), Just("1e3"), Just("nan"), Just("inf")].prop_map(String::from),
        (0u64..100_000).prop_map(|n| n.to_string()),
        prop_oneof![Just("R:R"), Just("P:P"), Just("G:G"), Just("Z:S"), Just("S:P"), Just("1:0"), Just("0:0"), Just("1:10"), Just("allkeys"), Just("1-5"), Just("5-1"), Just("0-3"), Just("R"), Just("P")].prop_map(String::from),
        prop_oneof![Just("GET __key__"), Just("SET __key__ __data__"), Just("SCAN 0"), Just("HSCAN h 0"), Just("\"a b"), Just("x__data__"), Just("__key__ x"), Just("")].prop_map(String::from),
        prop_oneof![Just("redis://h:1/2"), Just("rediss://u:p@h"), Just("redis://:0"), Just("resp3"), Just("epoll"), Just("50,99.9")].prop_map(String::from),
        "\\PC{0,12}",
    ]
}

/// An argv of table options (long, `--name=value`, short, clustered) and stray words.
fn argv() -> impl Strategy<Value = Vec<String>> {
    let supported: Vec<usize> = (0..TABLE.len()).filter(|&i| TABLE[i].refused().is_none()).collect();
    let index = prop_oneof![9 => proptest::sample::select(supported), 1 => 0..TABLE.len()];
    let one = (index, 0u8..4, value()).prop_map(|(i, form, v)| {
        let o = &TABLE[i];
        match (form, o.short, o.takes_value()) {
            (0, Some(c), true) => vec![format!("-{c}"), v],
            (1, Some(c), true) => vec![format!("-{c}{v}")],
            (_, Some(c), false) if form < 2 => vec![format!("-{c}")],
            (2, _, true) => vec![format!("--{}={v}", o.long)],
            (_, _, true) => vec![format!("--{}", o.long), v],
            (_, _, false) => vec![format!("--{}", o.long)],
        }
    });
    let stray = prop_oneof![Just("--".to_string()), Just("-".to_string()), Just("--=x".to_string()), "\\PC{0,6}"].prop_map(|s| vec![s]);
    vec(prop_oneof![8 => one, 1 => stray], 0..8).prop_map(|v| v.concat())
}

/// A stand-in for the server's answers: one node (three in cluster mode), no slots.
fn setup(o: &MtOptions) -> Setup {
    let n = if o.cluster_mode { 3 } else { 1 };
    Setup {
        info: run_info(o),
        connect: ConnectSpec { tls: None, prefix: Vec::new(), prefix_replies: 0 },
        endpoints: (1..=n).map(|p| Endpoint::Tcp("127.0.0.1".into(), p)).collect(),
        slots: vec![Vec::new(); n as usize],
        read_route: None,
        program: Arc::new(Program::new(o)),
        seed: 0,
        io: IoUsed { kind: IoKind::Epoll, note: None },
    }
}

/// The plan of a run, and a few requests of its first clients.
fn plan(o: &MtOptions) -> Result<(), TestCaseError> {
    let _ = (o.describe(), o.requests_per_client(), run_info(o));
    if o.clients.saturating_mul(o.threads) > 64 || o.data_max() > 1 << 20 {
        return Ok(()); // a plan too large for a unit test; its size is checked above
    }
    let s = setup(o);
    for p in plans(o, &s) {
        let w = p.window().expect("memtier plans are windows");
        for mut c in w.clients.iter().take(2).cloned() {
            for _ in 0..3 {
                let mut out = Vec::new();
                s.program.write_next(&mut c, &mut out);
                prop_assert!(out.len() <= s.program.max_request_len(), "a request over max_request_len");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_argv_is_a_refusal_or_a_plan(args in argv()) {
        if let Ok(MtParsed::Run(o)) = parse(&args) {
            plan(&o)?;
        }
    }
}
