//! memtier: a memtier_benchmark-compatible front end (`kvload memtier ...`, or kvload
//! started under the name `memtier_benchmark`) running on kvload's engine.
//! cli (argv → MtOptions) → program (commands, keys) → run (plans, engine) → report.

pub mod table;
pub mod keys;
pub mod options;
pub mod program;
pub mod read_pref;
pub mod report;
pub mod run;
