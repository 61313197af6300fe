//! kvload's own command line (a superset of valkey-benchmark's): `options` (argv → checked
//! options, `help`), `nodes` (the servers), `plan` (options → the engine's plans), `run`.
mod help;
mod nodes;
pub mod options;
mod plan;
mod run;

use crate::base::session::AUTH_ENV;

use options::Parsed;

/// `kvload [OPTIONS] [COMMAND ARGS...]`: the process exit code.
pub fn main(argv: &[String]) -> i32 {
    match options::parse(argv) {
        Ok(Parsed::Help) => {
            print!("{}", help::HELP);
            0
        }
        Ok(Parsed::Version) => {
            println!("kvload {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Parsed::Run(mut o)) => {
            options::password_from_env(&mut o, std::env::var(AUTH_ENV).ok());
            run::run(&o)
        }
        Err(e) => {
            eprintln!("kvload: {e}");
            2
        }
    }
}
