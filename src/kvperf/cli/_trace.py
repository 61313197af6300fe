"""``run --trace TRACE [--speed F|max] [--seed-from-trace]`` and ``compare --trace``, as
flags (pipeline/commands/replay.py runs them), and what a replay shows. Exit codes: 0 when
every replay ran, 1 when one failed, 2 for bad input (a bad trace: kvload's message with
the byte offset)."""

from __future__ import annotations

import argparse

from rich.markup import escape

from kvperf.cli._common import Cli, ConsoleHooks, print_interrupted
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.outputs import Ran
from kvperf.pipeline.commands.replay import (
    check_speed,
    compare_replays,
    replay,
    trace_compare_request,
    trace_request,
)
from kvperf.pipeline.request.replay import TraceFlags
from kvperf.report.comparison import terminal_table
from kvperf.report.table import results_table


def add_trace_args(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("trace replay", "real traffic as the workload (docs/TRACES.md)")
    group.add_argument("--trace", type=local_path, metavar="TRACE",
                       help="replay this trace (kvload record's, or a MONITOR capture)")
    group.add_argument("--speed", default="1", type=check_speed, metavar="F|max",
                       help="--trace: times divided by F (default 1), or max (closed loop)")
    group.add_argument("--seed-from-trace", action="store_true",
                       help="--trace: SET the keys the trace reads before it writes them")


def given(*flags: tuple[str, object]) -> tuple[str, ...]:
    """The names of the flags given (a true value) of the (--name, value) pairs."""
    return tuple(name for name, value in flags if value)


def handle_trace(cli: Cli, flags: TraceFlags) -> int:
    """`run --trace`: the replays' table, where the results are; the exit code."""
    found = replay(trace_request(flags), cli.world, ConsoleHooks(cli).scenarios)
    if found.summary is None:
        return print_interrupted(cli, found, "replay(s)")
    cli.out.print(results_table(found.summary.rows, found.title), highlight=False)
    return _finish(cli, found)


def handle_trace_compare(cli: Cli, flags: TraceFlags) -> int:
    """``compare --trace T --server-bin A --server-bin B [--runs N]``: both sides' replays
    judged by the one verdict rule."""
    found = compare_replays(trace_compare_request(flags), cli.world,
                            ConsoleHooks(cli).scenarios)
    if found.ran.summary is None:
        return print_interrupted(cli, found.ran, "replay(s)")
    if found.verdicts:
        cli.out.print(terminal_table(found.verdicts, *found.names))
    return _finish(cli, found.ran)


def _finish(cli: Cli, found: Ran) -> int:
    assert found.summary is not None
    rows = found.summary.rows
    for warning in found.warnings:
        cli.err.print(f"[yellow]warning[/yellow]: {escape(warning)}", highlight=False,
                      soft_wrap=True)
    cli.out.print(f"results: {found.summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, rows)
    if found.summary.failed:
        cli.err.print(f"[red]{found.summary.failed} of {len(rows)} replay(s) failed[/red]")
    return found.exit_code
