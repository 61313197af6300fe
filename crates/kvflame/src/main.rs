//! kvflame: kvperf's flamegraph tool, a thin command line over the `inferno` crate.
//!
//! ```text
//! kvflame collapse PERF_SCRIPT FOLDED            perf script text -> folded stacks
//! kvflame svg FOLDED SVG TITLE [UNIT]            folded stacks -> flamegraph SVG
//! kvflame diff BEFORE AFTER SVG TITLE [UNIT]     two folded files -> differential SVG
//! ```
//!
//! UNIT names what the counts measure (default "ns": perf's cpu-clock periods).
//!
//! Differential graphs colour a frame red when it grew from BEFORE to AFTER and blue when it
//! shrank; the caller scales the folded counts (kvperf normalises them per request) first.
//! Exit status: 0 on success, 2 on a usage error, 1 when reading or writing fails.
#![deny(clippy::unwrap_used)]

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::ExitCode;

use inferno::collapse::perf::{Folder, Options as CollapseOptions};
use inferno::collapse::Collapse;
use inferno::differential::{self, Options as DiffOptions};
use inferno::flamegraph::{self, Options as FlameOptions};

const USAGE: &str = "usage: kvflame collapse PERF_SCRIPT FOLDED | svg FOLDED SVG TITLE [UNIT] \
                     | diff BEFORE AFTER SVG TITLE [UNIT]";
const UNIT: &str = "ns";

fn open(path: &str) -> io::Result<BufReader<File>> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

fn create(path: &str) -> io::Result<BufWriter<File>> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

fn collapse(script: &str, folded: &str) -> io::Result<()> {
    let mut options = CollapseOptions::default();
    options.nthreads = 1;
    let mut out = create(folded)?;
    Folder::from(options).collapse(open(script)?, &mut out)?;
    out.flush()
}

fn svg(folded: &str, svg: &str, title: &str, unit: &str, differential: bool) -> io::Result<()> {
    let mut options = FlameOptions::default();
    options.title = title.to_string();
    options.count_name = unit.to_string();
    if differential {
        options.subtitle = Some("red: grew from before to after; blue: shrank".to_string());
    }
    let mut out = create(svg)?;
    flamegraph::from_reader(&mut options, open(folded)?, &mut out)?;
    out.flush()
}

fn diff(before: &str, after: &str, svg_path: &str, title: &str, unit: &str) -> io::Result<()> {
    let merged = format!("{svg_path}.diff.folded");
    {
        let mut out = create(&merged)?;
        differential::from_readers(
            DiffOptions::default(),
            open(before)?,
            open(after)?,
            &mut out,
        )?;
        out.flush()?;
    }
    let result = svg(&merged, svg_path, title, unit, true);
    std::fs::remove_file(&merged)?;
    result
}

fn run(args: &[String]) -> Option<io::Result<()>> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["collapse", script, folded] => Some(collapse(script, folded)),
        ["svg", folded, out, title] => Some(svg(folded, out, title, UNIT, false)),
        ["svg", folded, out, title, unit] => Some(svg(folded, out, title, unit, false)),
        ["diff", before, after, out, title] => Some(diff(before, after, out, title, UNIT)),
        ["diff", before, after, out, title, unit] => Some(diff(before, after, out, title, unit)),
        _ => None,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        None => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
        Some(Err(e)) => {
            eprintln!("kvflame: {e}");
            ExitCode::from(1)
        }
        Some(Ok(())) => ExitCode::SUCCESS,
    }
}
