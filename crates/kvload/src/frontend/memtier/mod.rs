//! memtier: a memtier_benchmark-compatible front end (`kvload memtier ...`, or kvload
//! started under the name `memtier_benchmark`) running on kvload's engine.
//! table (memtier's options) → options (argv → MtOptions) → keys, program (the requests:
//! the engine's window mode) → read_pref → plan (options → the engine's plans) → run →
//! report (memtier's table and JSON).

pub mod keys;
pub mod options;
pub mod plan;
pub mod program;
#[cfg(test)]
mod props;
pub mod read_pref;
pub mod report;
pub mod run;
pub mod table;

use crate::base::event_loop;

use options::MtParsed;

/// `kvload memtier ARGS` / `memtier_benchmark ARGS`: the process exit code.
pub fn main(argv: &[String]) -> i32 {
    match options::parse(argv) {
        Ok(MtParsed::Help) => {
            print!("{}", table::HELP);
            0
        }
        Ok(MtParsed::Version) => {
            println!("memtier_benchmark (kvload {} memtier front end)", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(MtParsed::OptionsJson) => {
            print!("{}", table::options_json());
            0
        }
        Ok(MtParsed::Run(o)) => match event_loop::resolve_and_note(o.io, o.tls.enabled) {
            Err(e) => {
                eprintln!("memtier_benchmark (kvload): {e}");
                2
            }
            Ok(io) => match run::run(&o, io) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: {e}");
                    1
                }
            },
        },
        Err(e) => {
            eprintln!("memtier_benchmark (kvload): {e}");
            2
        }
    }
}
