"""`kvperf compare`: interleaved A/B of two refs (built), or of N ≥ 2 server binaries
(the first is the baseline; one table of ratios against it): flags → the checked request
→ pipeline/commands/compare.py (the sides run, judged, written) → rendered → the exit code."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.markup import escape

from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._clients import add_client_args
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._definitions import (
    add_definition_args,
    add_snapshot_args,
    definition_flags,
    with_snapshot_flags,
)
from kvperf.cli._disturbed import add_disturbed_args, interference_flags, print_disturbed
from kvperf.cli._environment import print_environment
from kvperf.cli._interleaved import add_common, refuse_auto_runs
from kvperf.cli._measure import add_compare_arguments, add_water_line
from kvperf.cli._module_sides import (
    add_module_source_args,
    handle_module_sides,
    module_flags,
    refuse_module_flags,
)
from kvperf.cli._modules import add_module_args
from kvperf.cli._network import remote_flags
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._profile import (
    add_profile_arguments,
    print_differentials,
    print_profile,
    profile_settings,
)
from kvperf.cli._rate_sweep import add_rate_sweep_args, print_knees, rate_sweep_flags
from kvperf.cli._store import writer_flags
from kvperf.cli._trace import add_trace_args, given, handle_trace_compare
from kvperf.pipeline.commands.compare import Compared, compare, compare_request
from kvperf.pipeline.request.replay import TraceFlags
from kvperf.pipeline.request.sides import CompareFlags, CompareRequest
from kvperf.report.comparison import sides_table, stop_lines, terminal_table
from kvperf.report.instructions import terminal_tables as instruction_tables
from kvperf.report.memory import memory_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="interleaved A/B of two git refs (built) or N server binaries",
        description="Build two refs (or take two or more server binaries), run the same "
                    "matrix on all, alternating them trial by trial in a random (seeded) "
                    "order (or side by side with --schedule duet, the default for server "
                    "binaries when the trials are duration-bound), then judge every metric "
                    "with paired statistics against the first (the baseline).")
    p.add_argument("refs", nargs="*", metavar="REF",
                   help="two git refs of --repo: A (baseline) then B")
    p.add_argument("--server-bin", type=command_path, action="append", default=[],
                   metavar="PATH",
                   help="a server binary; give it two or more times, the first is the "
                        "baseline (instead of refs); a missing one is reported and skipped")
    add_common(p, default_runs=8)
    p.set_defaults(schedule=None)  # resolved by `default_schedule` (duet where it can)
    add_build_args(p)
    p.add_argument("--metrics", choices=("all", "rps", "latency", "memory"), default="all")
    p.add_argument("--output", type=local_path, help="write the markdown report here")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any row is a regression")
    add_water_line(p)
    add_compare_arguments(p)
    add_profile_arguments(p)
    add_definition_args(p)
    add_snapshot_args(p, reuse=False)
    add_disturbed_args(p, retry_default=True)
    add_client_args(p)
    add_rate_sweep_args(p)
    add_module_args(p)
    add_module_source_args(p, valkey_path=True)
    add_trace_args(p)
    p.set_defaults(handler=handle)


def request(args: argparse.Namespace) -> CompareRequest:
    """argv's flags → the checked request (UsageError, exit 2, before any build)."""
    return compare_request(CompareFlags(
        refs=tuple(args.refs), server_bins=tuple(args.server_bin), config=args.config,
        runs=args.runs, max_runs=args.max_runs, tool=args.tool, label=args.label,
        seed=args.seed, schedule=args.schedule, measure=args.measure, keys=args.keys,
        profile=profile_settings(args), metrics=args.metrics, output=args.output,
        fail_on_regression=args.fail_on_regression, water_line=args.water_line,
        min_effect=args.min_effect, build=build_flags(args), store=writer_flags(args),
        remote=remote_flags(args),
        definitions=with_snapshot_flags(args, definition_flags(args)),
        interference=interference_flags(args), clients=tuple(args.clients),
        clients_dirs=tuple(args.clients_dir), concurrency=args.concurrency,
        client_repos=tuple(args.client_repo),
        rate_sweep=rate_sweep_flags(args)))


def handle(args: argparse.Namespace, cli: Cli) -> int:
    refuse_module_flags(args)
    for flag, given_ in (("--module-repo", args.module_repo is not None),
                         ("--trace", args.trace is not None)):
        if given_:
            refuse_auto_runs(args.runs, args.max_runs, flag)
    if args.module_repo is not None:  # module refs on one server (cli/_module_sides.py)
        return handle_module_sides(cli, replace(
            module_flags(args, "compare", tuple(args.refs), tuple(args.server_bin)),
            seed=args.seed, interference=interference_flags(args), measure=args.measure,
            metrics=args.metrics, water_line=args.water_line, min_effect=args.min_effect,
            output=args.output, fail_on_regression=args.fail_on_regression))
    if args.trace is not None:
        return handle_trace_compare(cli, TraceFlags(
            args.trace, args.speed, args.seed_from_trace, tuple(args.server_bin), args.runs,
            None, writer_flags(args), interference_flags(args),
            given(("config", args.config), ("module-config", args.module_config),
                   ("definitions", args.definitions), ("profile", args.profile)),
            tuple(args.refs)))
    asked = request(args)
    for path, why in asked.skipped:
        cli.err.print(f"[yellow]skipped: {path}: {why}[/yellow]", soft_wrap=True)
    found = compare(asked, cli.world, ConsoleHooks(cli))
    render(cli, found)
    found.check_store()
    return found.exit_code


def render(cli: Cli, found: Compared) -> None:
    """What a compare found, in its mode's order (pipeline/commands/compare.py)."""
    out = cli.out
    if found.mode == "instructions":
        for table in instruction_tables(found.instructions, *found.names):
            out.print(table)
        _report_line(out, found)
        for made in found.differentials:
            print_differentials(out, made)
        print_environment(cli, found.environment)
        out.print(f"results: {found.directories} (order seed {found.seed})")
        return
    if found.mode == "many":
        memory = memory_table(found.memory) if found.memory is not None else None
        if memory is not None:
            out.print(memory)
        out.print(sides_table(found.verdicts, found.labels))
    else:
        _verdicts(out, found)
    if found.mode == "definitions":
        _definitions(cli, found)
        return
    print_knees(out, found.knees)
    print_profile(out, found.profile)
    for made in found.differentials:
        print_differentials(out, made)
    _finish(cli, found)


def _report_line(out: Console, found: Compared) -> None:
    if found.report is not None:
        out.print(f"markdown report: {found.report}")


def _verdicts(out: Console, found: Compared) -> None:
    """The verdict table, or why there is none (every row profiled, none timed: an empty
    table would read as a comparison that found nothing)."""
    base, new = found.names[0], found.names[1]
    if found.verdicts:
        out.print(terminal_table(found.verdicts, base, new))
        for line in stop_lines(found.stops):
            out.print(f"rounds · {line}", highlight=False)
    else:
        out.print(f"{new} vs {base}: no timing verdicts, no series has timed rows on both "
                  "sides (profiled trials are not timed)", highlight=False)


def _definitions(cli: Cli, found: Compared) -> None:
    """`compare A B --definitions …`: the tests' profiles, where the results are."""
    print_profile(cli.out, found.profile)
    _report_line(cli.out, found)
    cli.out.print(f"results: {found.directories} (order seed {found.seed})")
    print_disturbed(cli.out, cli.err, found.rows)
    print_environment(cli, found.environment)
    if found.failed:
        cli.err.print(f"[red]{found.failed} test(s) failed[/red] (see the results' logs.txt)")


def _finish(cli: Cli, found: Compared) -> None:
    """Blocked sides, saturation, disturbed trials, the markdown file, where the results
    are."""
    for name, why in found.blocked:
        cli.err.print(f"[red]side {name} did not run: every trial failed[/red] "
                      f"({escape(why)})", soft_wrap=True)
    if found.saturated:
        cli.err.print("[yellow]! the load tool saturated its CPU in some trials: this "
                      "comparison may be client-bound and hide server-side changes[/yellow]")
    print_disturbed(cli.out, cli.err, found.rows)
    print_environment(cli, found.environment)
    _report_line(cli.out, found)
    cli.out.print(f"results: {found.directories} (order seed {found.seed})")
