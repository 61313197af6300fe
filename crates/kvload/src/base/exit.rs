//! exit: how a subcommand's bad input ends — its message on stderr and exit status 2; the
//! parsed options of a subcommand, or the exit code after `--help` (0) or bad input (2).

/// Prints `kvload <what>: <e>` and returns the exit code for bad input.
pub fn bad_input(what: &str, e: &str) -> i32 {
    eprintln!("kvload {what}: {e}");
    2
}

/// A subcommand's parsed options, or the exit code: 0 after printing `help` (`--help`),
/// 2 after printing the error.
pub fn options<T>(parsed: Result<Option<T>, String>, what: &str, help: &str) -> Result<T, i32> {
    match parsed {
        Ok(Some(o)) => Ok(o),
        Ok(None) => {
            print!("{help}");
            Err(0)
        }
        Err(e) => Err(bad_input(what, &e)),
    }
}
