"""`kvperf compare`: interleaved A/B of two refs (built), or of N ≥ 2 server binaries
(the first is the baseline; one table of ratios against it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import MetricComparison, compare_paired, compare_sides
from kvperf.analysis.verdict import Rule, Verdict
from kvperf.cli._builds import add_build_args, build_flags, build_refs
from kvperf.cli._definitions import (
    add_definition_args,
    compare_definitions,
    uses_definition_flags,
)
from kvperf.cli._interleaved import add_common, check_schedule, request_from, run_sides
from kvperf.cli._measure import add_compare_arguments, instruction_verdicts
from kvperf.cli._network import refuse_server_host_with_definitions
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._profile import add_profile_arguments, print_differentials, print_profile
from kvperf.cli.compare_results import add_water_line, rule_from
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline.ab import SidesResult
from kvperf.pipeline.sides import PreparedSides, Side, default_schedule, side_from_build
from kvperf.report.comparison import (
    PAIRED_NOTE,
    markdown,
    sides_markdown,
    sides_table,
    terminal_table,
)
from kvperf.report.memory import memory_table
from kvperf.results.row import is_ok
from kvperf.server.binary import missing


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
    p.set_defaults(handler=handle)


def _sides(args: argparse.Namespace, console: Console) -> list[Side]:
    if args.refs and args.server_bin:
        raise UsageError("give either two refs or --server-bin twice, not both")
    if args.refs:
        if len(args.refs) != 2:
            raise UsageError(f"compare needs exactly two refs (A then B), got "
                             f"{len(args.refs)}: {' '.join(args.refs)}")
        check_schedule(args, 2)
        builds = build_refs(build_flags(args), args.refs, console)
        return [side_from_build("A", builds[0]), side_from_build("B", builds[1])]
    if len(args.server_bin) < 2:
        raise UsageError(f"give two refs, or --server-bin at least twice (the first is the "
                         f"baseline), got {len(args.server_bin)} --server-bin")
    present = []
    for path in args.server_bin:
        why = missing(path)
        if why:
            console.print(f"[yellow]skipped: {path}: {why}[/yellow]", soft_wrap=True)
        else:
            present.append(path)
    if len(present) < 2:
        raise UsageError(f"compare needs two runnable --server-bin, {len(present)} left after "
                         "skipping the missing ones")
    return [Side(side_name(n), path) for n, path in enumerate(present)]


def side_name(index: int) -> str:
    """A, B, … Z, then S27, S28 …: the sides' directory names."""
    return chr(ord("A") + index) if index < 26 else f"S{index + 1}"


def _resolve_schedule(args: argparse.Namespace, sides: int) -> None:
    """--schedule as given; else duet for server binaries where the plan allows it."""
    if args.schedule is None:
        args.schedule = (default_schedule(args.config, args.measure, args.tool,
                                          bool(args.profile), sides)
                         if args.server_bin else Schedule.ALTERNATE)


def _name(side: str, prepared: Any) -> str:
    ctx = prepared.context
    what = ctx.commit[:12] if ctx.commit else ctx.server_version
    return f"{side} {what}"


def _compare_definitions(args: argparse.Namespace, sides: list[Side], rule: Rule,
                         console: Console) -> int:
    """`compare A B --definitions …`: the definitions' tests interleaved, judged per test."""
    if len(sides) != 2:
        raise UsageError(f"--definitions compares two sides, got {len(sides)}")
    rows, prepared = compare_definitions(args, sides, console)
    names = (_name("A", prepared.runs["A"]), _name("B", prepared.runs["B"]))
    out = Console(width=None if sys.stdout.isatty() else 220)
    results = compare_paired(rows["A"], rows["B"], args.metrics, rule)
    out.print(terminal_table(results, *names))
    print_profile(out, rows["A"] + rows["B"], prepared.runs["A"].out_dir.parent)
    if args.output:
        args.output.write_text(markdown(results, [], *names, note=PAIRED_NOTE))
        out.print(f"markdown report: {args.output}")
    dirs = " and ".join(str(run.out_dir) for run in prepared.runs.values())
    out.print(f"results: {dirs} (order seed {prepared.seed})")
    failed = sum(1 for side_rows in rows.values() for r in side_rows if not is_ok(r))
    if failed:
        console.print(f"[red]{failed} test(s) failed[/red] (see the results' logs.txt)")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    return 1 if failed or (regressed and args.fail_on_regression) else 0


def handle(args: argparse.Namespace, console: Console) -> int:
    rule = rule_from(args)
    if args.definitions is None and uses_definition_flags(args):
        raise UsageError("the definition selection flags (--tests-regexp, --topologies, "
                         "--override-test-time …) apply only with --definitions")
    if args.definitions is not None:  # alternating only; two sides
        refuse_server_host_with_definitions(args)
        return _compare_definitions(args, _sides(args, console), rule, console)
    if not args.refs:
        _resolve_schedule(args, len(args.server_bin))
    sides = _sides(args, console)
    if args.measure in (Measure.INSTRUCTIONS, Measure.PERF_INSTRUCTIONS) and len(sides) > 2:
        raise UsageError(f"--measure {args.measure} compares two sides; give --server-bin "
                         "twice")
    _resolve_schedule(args, len(sides))
    result, plan = run_sides(args, request_from(args, "compare", args.seed), sides, console)
    prepared = plan.sides
    out = Console(width=None if sys.stdout.isatty() else 220)
    if len(sides) > 2 or args.measure == Measure.MEMORY:
        return _many(args, result, plan, out, console)
    names = (_name("A", prepared["A"]), _name("B", prepared["B"]))
    if args.measure != Measure.TIMING:
        return instruction_verdicts(args, result, [p.out_dir for p in prepared.values()],
                                    names, out)
    results = compare_paired(result.a_rows, result.b_rows, args.metrics, rule)
    out.print(terminal_table(results, *names))
    print_profile(out, result.a_rows + result.b_rows, plan.out_dir)
    if args.profile or any(r.get("profile") for r in result.a_rows):  # or profiling_sets
        print_differentials(out, result.a_rows, result.b_rows,
                            (prepared["A"].out_dir, prepared["B"].out_dir),
                            f"{names[1]} vs {names[0]}")
    return _finish(args, result, plan, results, out, console,
                   lambda: markdown(results, [], *names, note=PAIRED_NOTE))


def _finish(args: argparse.Namespace, result: SidesResult, plan: PreparedSides,
            results: list[MetricComparison], out: Console, console: Console,
            report: Callable[[], str]) -> int:
    """Blocked sides, saturation, the markdown file, where the results are; the exit code."""
    prepared = plan.sides
    for name, side in prepared.items():
        blocked = side.options.blocked
        if blocked:
            console.print(f"[red]side {name} did not run: every trial failed[/red] "
                          f"({blocked.splitlines()[0]})", soft_wrap=True)
    rows = [r for rows in result.rows.values() for r in rows]
    if any(r.get("client_saturated") for r in rows):
        console.print("[yellow]! the load tool saturated its CPU in some trials: this "
                      "comparison may be client-bound and hide server-side changes[/yellow]")
    if args.output:
        args.output.write_text(report())
        out.print(f"markdown report: {args.output}")
    dirs = " and ".join(str(p.out_dir) for p in prepared.values())
    out.print(f"results: {dirs} (order seed {result.seed})")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    result.check_store()
    return 1 if result.failed or (regressed and args.fail_on_regression) else 0


def _many(args: argparse.Namespace, result: SidesResult, plan: PreparedSides, out: Console,
          console: Console) -> int:
    """N servers (or --measure memory): one table of ratios against the baseline, the
    memory table when rows carry memory; exit code as for two sides."""
    labels = {name: f"{name}: {plan.labels.get(name, name)}" for name in result.rows}
    metrics = "memory" if args.measure == Measure.MEMORY else args.metrics
    results = compare_sides(result.rows, metrics, rule_from(args))
    table = memory_table({labels[n]: rows for n, rows in result.rows.items()})
    if table is not None and args.measure == Measure.MEMORY:
        out.print(table)
    out.print(sides_table(results, labels))
    rows = [r for rows in result.rows.values() for r in rows]
    print_profile(out, rows, plan.out_dir)
    base = next(iter(result.rows))
    if args.profile:
        for name in list(result.rows)[1:]:
            print_differentials(out, result.rows[base], result.rows[name],
                                (plan.sides[base].out_dir, plan.sides[name].out_dir),
                                f"{labels[name]} vs {labels[base]}")
    return _finish(args, result, plan, results, out, console,
                   lambda: sides_markdown(results, labels))
