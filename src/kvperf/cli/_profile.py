"""``--profile`` flags of `run` and `compare`, and the artifact tables after a profiled run."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from kvperf.core.kinds import ProfileMode
from kvperf.pipeline.commands import checks
from kvperf.pipeline.commands.outputs import Differentials, Profiled
from kvperf.pipeline.commands.vocabulary import CALL_GRAPHS, PROFILE_CALL_GRAPH, PROFILE_FREQUENCY
from kvperf.pipeline.request.options import ProfileSettings
from kvperf.report.profile import artifact_table, notes, terminal_tables


def add_profile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", action="store_true",
                   help="perf record (cpu-clock) every server node during the measure "
                        "stage: perf.data, folded stacks, a flamegraph SVG and perf report "
                        "per trial and node; profiled trials stay out of timing statistics")
    p.add_argument("--profile-frequency", type=int, default=PROFILE_FREQUENCY,
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
                   default=PROFILE_CALL_GRAPH,
                   help="--profile stack walking: fp (frame pointers, default; whole stacks "
                        "for Debian's valkey-server) or dwarf (binaries without frame "
                        "pointers; much larger perf.data)")


def profile_settings(args: argparse.Namespace) -> ProfileSettings | None:
    """The --profile flags of add_profile_arguments (checked by pipeline/run/profiling.py)."""
    return checks.profile_settings(args.profile, args.profile_frequency,
                                   args.profile_call_graph, args.profile_mode,
                                   args.profile_delay, args.profile_duration)


def print_profile(out: Console, found: Profiled | None) -> None:
    """The artifact and top-CPU tables and their notes (their markdown: ``found.path``)."""
    if found is None:
        return
    for table in terminal_tables(found.rows):
        out.print(table)
    for note in notes(found.rows):
        out.print(f"[yellow]! {note}[/yellow]")
    out.print(f"profile artifacts: {found.path}")


def print_differentials(out: Console, made: Differentials | None) -> None:
    """`compare --profile` / `--measure instructions`: the differential flamegraphs."""
    if made is None:
        return
    if made.error is not None:  # the comparison stands without its picture
        out.print(f"[yellow]! no differential flamegraph: {escape(made.error)}[/yellow]")
        return
    out.print(artifact_table("differential flamegraphs (red: grew in B per request, "
                             "blue: shrank)", made.lines))
