"""``run --trace TRACE [--speed F|max] [--seed-from-trace]``: a recorded trace (kvload's
format or a MONITOR capture, docs/TRACES.md) replayed as the workload, ``--runs`` times on
fresh servers, rows stored as any trial's. Exit codes: 0 when every replay ran, 1 when one
failed, 2 for bad input (a bad trace: kvload's message with the byte offset)."""

from __future__ import annotations

import argparse

from kvperf.analysis.comparison import compare_paired
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._disturbed import interference_flags, print_disturbed
from kvperf.cli._paths import local_path
from kvperf.cli._store import writer_flags
from kvperf.core.errors import Interrupted, UsageError
from kvperf.driver.trace_replay import Replay
from kvperf.pipeline.commands.checks import interference_policy, store_request
from kvperf.pipeline.request.common import StoreRequest
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.run.trace_work import TraceOptions, check_speed, compare_trace, run_trace
from kvperf.report.comparison import terminal_table
from kvperf.report.table import results_table

# Flags of `run` a trace replay does not take (it brings its own workload).
NOT_WITH_TRACE = ("config", "commits", "module_config", "definitions", "suite", "gate",
                  "use_running_server", "profile", "quick")


def add_trace_args(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("trace replay", "real traffic as the workload (docs/TRACES.md)")
    group.add_argument("--trace", type=local_path, metavar="TRACE",
                       help="replay this trace (kvload record's, or a MONITOR capture)")
    group.add_argument("--speed", default="1", type=check_speed, metavar="F|max",
                       help="--trace: times divided by F (default 1), or max (closed loop)")
    group.add_argument("--seed-from-trace", action="store_true",
                       help="--trace: SET the keys the trace reads before it writes them")


def _refuse_other_work(args: argparse.Namespace) -> None:
    """A replay brings its own workload: flags that choose another are bad input."""
    for name in (*NOT_WITH_TRACE, "dry_run"):
        if getattr(args, name, None):
            raise UsageError(f"--{name.replace('_', '-')} does not apply to --trace")
    if getattr(args, "refs", None):
        raise UsageError("compare --trace compares --server-bin binaries, not refs")


def trace_policy(args: argparse.Namespace, retry_default: bool) -> InterferencePolicy:
    """--retry-disturbed / --exclude-disturbed for replays (run's default: no retry;
    compare's: retry), as for any timed trial."""
    return interference_policy(interference_flags(args), retry_default=retry_default)


def handle_trace(args: argparse.Namespace, cli: Cli) -> int:
    _refuse_other_work(args)
    flags = writer_flags(args)
    options = TraceOptions(args.trace, Replay(args.speed, args.seed_from_trace),
                           flags.results_dir, args.label, args.server_bin, args.runs)
    store: StoreRequest = store_request(flags, live=True)
    hooks = ConsoleHooks(cli)
    ran = run_trace(options, store, cli.world, hooks.scenarios, trace_policy(args, False))
    summary = ran.persisted.summary
    if summary is None:
        cli.err.print(f"[yellow]interrupted[/yellow]: {ran.persisted.kept} finished "
                      f"replay(s) kept in {ran.persisted.path}")
        return Interrupted.exit_code
    cli.out.print(results_table(summary.rows, f"{ran.run.context.label} · kvload "
                                              f"{ran.run.context.tool_version} · trace "
                                              f"sha256 {ran.run.trace.sha256[:12]}"),
                  highlight=False)
    cli.out.print(f"results: {summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, summary.rows)
    if summary.failed:
        cli.err.print(f"[red]{summary.failed} of {len(summary.rows)} replay(s) failed[/red]")
    return summary.exit_code


def handle_trace_compare(args: argparse.Namespace, cli: Cli) -> int:
    """``compare --trace T --server-bin A --server-bin B [--runs N]``: the trace replayed on
    both servers, interleaved by round, judged by the one verdict rule (paired by round)."""
    _refuse_other_work(args)
    bins = list(args.server_bin or ())
    if len(bins) != 2:
        raise UsageError("compare --trace takes two --server-bin (A then B)")
    flags = writer_flags(args)
    replay = Replay(args.speed, args.seed_from_trace)
    results = flags.results_dir
    options = {name: TraceOptions(args.trace, replay, results, f"trace-{name}", str(path), 1)
               for name, path in zip(("A", "B"), bins, strict=True)}
    rounds = args.runs if args.runs is not None else 8
    hooks = ConsoleHooks(cli)
    done = compare_trace(options, rounds, results / "trace-compare",
                         store_request(flags, live=True), cli.world, hooks.scenarios,
                         trace_policy(args, True))
    summary = done.persisted.summary
    if summary is None:
        cli.err.print(f"[yellow]interrupted[/yellow]: {done.persisted.kept} finished "
                      f"replay(s) kept in {done.persisted.path}")
        return Interrupted.exit_code
    runs = done.sides.sides
    names = (f"A: {runs['A'].binary.display_name}", f"B: {runs['B'].binary.display_name}")
    a_rows, b_rows = done.rows("A"), done.rows("B")
    found = compare_paired(a_rows, b_rows)
    if found:
        cli.out.print(terminal_table(found, *names))
    cli.out.print(f"results: {summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, summary.rows)
    if summary.failed:
        cli.err.print(f"[red]{summary.failed} of {len(summary.rows)} replay(s) failed[/red]")
    return summary.exit_code
