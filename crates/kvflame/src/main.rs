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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::path::PathBuf;

    /// A fresh scratch directory per test (removed first, left for inspection on failure).
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kvflame-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn path(dir: &std::path::Path, name: &str) -> String {
        dir.join(name).to_string_lossy().into_owned()
    }

    /// `perf script` output of cpu-clock samples: (period, stack leaf first).
    fn perf_script(samples: &[(u64, &[&str])]) -> String {
        let mut text = String::new();
        for (k, (period, stack)) in samples.iter().enumerate() {
            text.push_str(&format!("valkey-server 4242 [000] 100.{k:06}: {period} cpu-clock:ppp: \n"));
            for (depth, frame) in stack.iter().enumerate() {
                text.push_str(&format!("\t    55d1c0a1{depth:04x} {frame}+0x1{depth} (/usr/bin/valkey-server)\n"));
            }
            text.push('\n');
        }
        text
    }

    /// The SVG's frame titles ("name (count unit, share%)" or, differential, "...; +d%)").
    fn frame_titles(svg: &str) -> Vec<&str> {
        svg.split("<title>").skip(1).filter_map(|t| t.split("</title>").next()).collect()
    }

    fn title_of<'a>(svg: &'a str, function: &str) -> &'a str {
        let prefix = format!("{function} (");
        let titles = frame_titles(svg);
        let found = titles.iter().find(|t| t.starts_with(&prefix));
        found.unwrap_or_else(|| panic!("no {function} frame in {titles:?}"))
    }

    /// The fill colour of the frame whose title starts with `function (`.
    fn fill_of(svg: &str, function: &str) -> (u8, u8, u8) {
        let at = svg.find(&format!("<title>{function} (")).unwrap();
        let rest = &svg[at..];
        let fill = rest.find("fill=\"rgb(").unwrap() + "fill=\"rgb(".len();
        let rgb: Vec<u8> = rest[fill..].split(')').next().unwrap().split(',').map(|c| c.trim().parse().unwrap()).collect();
        (rgb[0], rgb[1], rgb[2])
    }

    #[test]
    fn collapse_folds_perf_stacks_root_first_and_sums_the_periods() {
        let dir = scratch("collapse");
        let set: &[&str] = &["setCommand", "call", "processCommand", "aeMain", "main"];
        let wait: &[&str] = &["epoll_wait", "aeMain", "main"];
        std::fs::write(dir.join("perf.txt"), perf_script(&[(250000, set), (100000, wait), (250000, set)])).unwrap();
        collapse(&path(&dir, "perf.txt"), &path(&dir, "out.folded")).unwrap();
        let folded = std::fs::read_to_string(dir.join("out.folded")).unwrap();
        let mut lines: Vec<&str> = folded.lines().collect();
        lines.sort_unstable();
        // The process is the root, offsets are gone, identical stacks are merged and the
        // counts are cpu-clock periods (ns), not sample counts.
        assert_eq!(
            lines,
            [
                "valkey-server;main;aeMain;epoll_wait 100000",
                "valkey-server;main;aeMain;processCommand;call;setCommand 500000",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn svg_titles_the_graph_and_counts_each_frame_in_the_unit() {
        let dir = scratch("svg");
        let folded = "valkey-server;main;aeMain;processCommand;setCommand 300\nvalkey-server;main;aeMain;epoll_wait 100\n";
        std::fs::write(dir.join("in.folded"), folded).unwrap();
        svg(&path(&dir, "in.folded"), &path(&dir, "out.svg"), "SET node0", "ps", false).unwrap();
        let out = std::fs::read_to_string(dir.join("out.svg")).unwrap();
        assert!(out.starts_with("<?xml") && out.contains("<svg"), "{}", &out[..out.len().min(200)]);
        assert!(out.contains(">SET node0</text>"), "the title is drawn");
        assert_eq!(title_of(&out, "setCommand"), "setCommand (300 ps, 75.00%)");
        assert_eq!(title_of(&out, "epoll_wait"), "epoll_wait (100 ps, 25.00%)");
        assert_eq!(title_of(&out, "aeMain"), "aeMain (400 ps, 100.00%)");
        assert!(!out.contains("grew from before to after"), "no differential subtitle");
        // The default unit is perf's cpu-clock nanoseconds.
        assert!(run(&["svg".into(), path(&dir, "in.folded"), path(&dir, "ns.svg"), "t".into()]).unwrap().is_ok());
        let ns = std::fs::read_to_string(dir.join("ns.svg")).unwrap();
        assert_eq!(title_of(&ns, "setCommand"), "setCommand (300 ns, 75.00%)");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn diff_colours_grown_frames_red_and_shrunk_ones_blue() {
        let dir = scratch("diff");
        std::fs::write(dir.join("a.folded"), "s;main;setCommand 100\ns;main;getCommand 100\n").unwrap();
        std::fs::write(dir.join("b.folded"), "s;main;setCommand 300\ns;main;getCommand 50\n").unwrap();
        let args: Vec<String> = ["diff", "a.folded", "b.folded", "d.svg", "SET B vs A", "ps"]
            .iter()
            .enumerate()
            .map(|(k, a)| if (1..=3).contains(&k) { path(&dir, a) } else { (*a).to_string() })
            .collect();
        run(&args).unwrap().unwrap();
        let out = std::fs::read_to_string(dir.join("d.svg")).unwrap();
        assert!(out.contains("red: grew from before to after; blue: shrank"), "subtitle");
        assert!(out.contains(">SET B vs A</text>"));
        // Widths are AFTER's counts; the title carries the change from BEFORE.
        assert_eq!(title_of(&out, "setCommand"), "setCommand (300 ps, 85.71%; +57.14%)");
        assert_eq!(title_of(&out, "getCommand"), "getCommand (50 ps, 14.29%; -14.29%)");
        let (r, g, b) = fill_of(&out, "setCommand");
        assert!(r == 255 && g < 255 && b < 255, "grown frame is red: {r},{g},{b}");
        let (r, g, b) = fill_of(&out, "getCommand");
        assert!(b == 255 && r < 255 && g < 255, "shrunk frame is blue: {r},{g},{b}");
        // The merged two-column file is a temporary: only the SVG remains.
        let mut left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort_unstable();
        assert_eq!(left, ["a.folded", "b.folded", "d.svg"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_arguments_are_usage_errors_and_missing_files_are_named() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for bad in [&[][..], &["svg", "a"], &["collapse", "a"], &["diff", "a", "b", "c"], &["render", "a", "b", "c"]] {
            assert!(run(&words(bad)).is_none(), "{bad:?} must be a usage error");
        }
        let dir = scratch("missing");
        let missing = path(&dir, "nope.folded");
        let err = run(&words(&["svg", &missing, &path(&dir, "x.svg"), "t"])).unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().starts_with(&format!("{missing}: ")), "{err}");
        let err = collapse(&path(&dir, "nope.txt"), &path(&dir, "x.folded")).unwrap_err();
        assert!(err.to_string().contains("nope.txt"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
