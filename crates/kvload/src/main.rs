//! kvload: a load generator for Redis-protocol servers (Valkey/Redis).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod base;
mod engine;
mod frontend;
mod report;
mod workload;

use frontend::{memtier, native::{options as cli, run as runner}, pubsub, trace};

fn main() {
    // SAFETY: ignoring SIGPIPE so broken connections surface as write errors.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let args: Vec<String> = std::env::args().collect();
    let argv = &args[1.min(args.len())..];
    let invoked_as = args.first().map(|a| std::path::Path::new(a).file_name().unwrap_or_default().to_string_lossy().into_owned());
    if invoked_as.as_deref() == Some("memtier_benchmark") {
        std::process::exit(memtier::run::main(argv));
    }
    if argv.first().map(String::as_str) == Some("memtier") {
        std::process::exit(memtier::run::main(&argv[1..]));
    }
    match argv.first().map(String::as_str) {
        Some("record") => std::process::exit(trace::record::main(&argv[1..])),
        Some("replay") => std::process::exit(trace::replay::main(&argv[1..])),
        Some("trace-info") => std::process::exit(trace::info::main(&argv[1..])),
        Some("pubsub") => std::process::exit(pubsub::main(&argv[1..])),
        _ => {}
    }
    let code = match cli::parse(argv) {
        Ok(cli::Parsed::Help) => {
            print!("{}", cli::HELP);
            0
        }
        Ok(cli::Parsed::Version) => {
            println!("kvload {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(cli::Parsed::Run(mut o)) => {
            cli::password_from_env(&mut o, std::env::var(base::session::AUTH_ENV).ok());
            runner::run(&o)
        }
        Err(e) => {
            eprintln!("kvload: {e}");
            2
        }
    };
    std::process::exit(code);
}
