"""``--profile`` flags of `run` and `compare`, and the artifact tables after a profiled run."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.config.model import ProfileSettings
from kvperf.core.errors import ServerError, UsageError
from kvperf.core.kinds import ProfileMode
from kvperf.pipeline.run.flamediff import differentials
from kvperf.report.profile import (
    artifact_table,
    differential_rows,
    markdown,
    markdown_artifacts,
    notes,
    terminal_tables,
)
from kvperf.results.row import Row
from kvperf.server.perf_record import CALL_GRAPHS

ARTIFACTS_FILE = "profile.md"


def add_profile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", action="store_true",
                   help="perf record (cpu-clock) every server node during the measure "
                        "stage: perf.data, folded stacks, a flamegraph SVG and perf report "
                        "per trial and node; profiled trials stay out of timing statistics")
    p.add_argument("--profile-frequency", type=int, default=ProfileSettings.frequency,
                   metavar="HZ", help="--profile sampling frequency (default %(default)s)")
    p.add_argument("--profile-mode", choices=[str(m) for m in ProfileMode], default="cpu",
                   help="--profile: cpu (on-CPU samples, default) or wall-time (also every "
                        "off-CPU interval, weighed by the stack it blocked in; needs root)")
    p.add_argument("--profile-delay", type=float, default=0.0, metavar="S",
                   help="--profile: start sampling S seconds into the measure stage")
    p.add_argument("--profile-duration", type=float, default=None, metavar="S",
                   help="--profile: sample for S seconds (default: to the end of the "
                        "measure stage)")
    p.add_argument("--profile-call-graph", choices=CALL_GRAPHS,
                   default=ProfileSettings.call_graph,
                   help="--profile stack walking: fp (frame pointers, default; whole stacks "
                        "for Debian's valkey-server) or dwarf (binaries without frame "
                        "pointers; much larger perf.data)")


def profile_settings(args: argparse.Namespace) -> ProfileSettings | None:
    """The --profile flags of add_profile_arguments (checked by pipeline/run/profiling.py)."""
    if not args.profile:
        return None
    return ProfileSettings(args.profile_frequency, args.profile_call_graph,
                           ProfileMode(args.profile_mode), args.profile_delay,
                           args.profile_duration)


def print_profile(out: Console, rows: list[Row], out_dir: Path) -> None:
    """The artifact and top-CPU tables, their notes, and the same as markdown in out_dir."""
    tables = terminal_tables(rows)
    if not tables:
        return
    for table in tables:
        out.print(table)
    for note in notes(rows):
        out.print(f"[yellow]! {note}[/yellow]")
    path = out_dir / ARTIFACTS_FILE
    path.write_text(markdown(rows))
    out.print(f"profile artifacts: {path}")


def print_differentials(out: Console, a_rows: list[Row],
                        b_rows: list[Row], dirs: tuple[Path, Path],
                        title: str, kind: str = "profile") -> None:
    """`compare --profile` / `--measure instructions`: write and list one differential
    flamegraph per series."""
    base = dirs[0].parent
    try:
        made = differentials(a_rows, b_rows, dirs[0], dirs[1], base, title, kind)
    except (ServerError, UsageError) as exc:  # the comparison stands without its picture
        out.print(f"[yellow]! no differential flamegraph: {escape(str(exc))}[/yellow]")
        return
    if not made:
        return
    profiler = "callgrind Ir" if kind == "instructions" else "perf cpu-clock"
    lines = differential_rows([(d.row, str(d.svg.relative_to(base))) for d in made],
                              profiler)
    out.print(artifact_table("differential flamegraphs (red: grew in B per request, "
                             "blue: shrank)", lines))
    with (base / ARTIFACTS_FILE).open("a") as md:
        md.write("\n" + markdown_artifacts("Differential flamegraphs", lines))
