//! kvload: a load generator for Redis-protocol servers (Valkey/Redis).
//!
//! Layers, each importing only those below it (docs/ARCHITECTURE.md; checked by
//! tests/layers.rs): `base` (protocol, connections, clocks) → `engine` (event loops,
//! statistics) → `workload` (tests, keys, datasets, cluster slots) → `report` → the front
//! ends in `frontend` (kvload's own, memtier's, trace record/replay, pub/sub) → main.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod base;
mod engine;
mod frontend;
mod report;
mod workload;

use frontend::{memtier, native, pubsub, trace};

fn main() {
    // SAFETY: ignoring SIGPIPE so broken connections surface as write errors.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let args: Vec<String> = std::env::args().collect();
    let argv = &args[1.min(args.len())..];
    let invoked_as = args.first().map(|a| std::path::Path::new(a).file_name().unwrap_or_default().to_string_lossy().into_owned());
    let code = if invoked_as.as_deref() == Some("memtier_benchmark") {
        memtier::main(argv)
    } else {
        match argv.first().map(String::as_str) {
            Some("memtier") => memtier::main(&argv[1..]),
            Some("record") => trace::record::main(&argv[1..]),
            Some("replay") => trace::replay::main(&argv[1..]),
            Some("trace-info") => trace::info::main(&argv[1..]),
            Some("pubsub") => pubsub::main(&argv[1..]),
            _ => native::main(argv),
        }
    };
    std::process::exit(code);
}
