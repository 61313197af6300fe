"""`kvperf compare`: interleaved A/B of two refs (built) or two server binaries."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.verdict import Rule, Verdict
from kvperf.cli._builds import add_build_args, build_flags, build_refs
from kvperf.cli._definitions import (
    add_definition_args,
    compare_definitions,
    uses_definition_flags,
)
from kvperf.cli._interleaved import add_common, check_schedule, request_from, run_sides
from kvperf.cli._measure import add_compare_arguments, instruction_verdicts
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._profile import add_profile_arguments, print_differentials, print_profile
from kvperf.cli.compare_results import add_water_line, rule_from
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.pipeline.sides import Side, side_from_build
from kvperf.report.comparison import PAIRED_NOTE, markdown, terminal_table
from kvperf.results.row import is_ok


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="interleaved A/B of two git refs (built) or two server binaries",
        description="Build two refs (or take two server binaries), run the same matrix on "
                    "both, alternating A and B trial by trial in a random (seeded) order "
                    "(or side by side with --schedule duet), then judge every metric with "
                    "paired statistics.")
    p.add_argument("refs", nargs="*", metavar="REF",
                   help="two git refs of --repo: A (baseline) then B")
    p.add_argument("--server-bin", type=command_path, action="append", default=[],
                   metavar="PATH",
                   help="server binary of A, then of B (give it twice; instead of refs)")
    add_common(p, default_runs=8)
    add_build_args(p)
    p.add_argument("--metrics", choices=("all", "rps", "latency"), default="all")
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
    if len(args.server_bin) != 2:
        raise UsageError(f"give two refs, or --server-bin exactly twice (A then B), got "
                         f"{len(args.server_bin)} --server-bin")
    return [Side("A", args.server_bin[0]), Side("B", args.server_bin[1])]


def _name(side: str, prepared: Any) -> str:
    ctx = prepared.context
    what = ctx.commit[:12] if ctx.commit else ctx.server_version
    return f"{side} {what}"


def _compare_definitions(args: argparse.Namespace, sides: list[Side], rule: Rule,
                         console: Console) -> int:
    """`compare A B --definitions …`: the definitions' tests interleaved, judged per test."""
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
    sides = _sides(args, console)
    if args.definitions is not None:
        return _compare_definitions(args, sides, rule, console)
    result, plan = run_sides(args, request_from(args, "compare", args.seed), sides, console)
    prepared = plan.sides
    names = (_name("A", prepared["A"]), _name("B", prepared["B"]))
    out = Console(width=None if sys.stdout.isatty() else 220)
    if args.measure != Measure.TIMING:
        return instruction_verdicts(args, result, [p.out_dir for p in prepared.values()],
                                    names, out)
    results = compare_paired(result.a_rows, result.b_rows, args.metrics, rule)
    out.print(terminal_table(results, *names))
    print_profile(out, result.a_rows + result.b_rows, prepared["A"].out_dir.parent)
    if args.profile or any(r.get("profile") for r in result.a_rows):  # or profiling_sets
        print_differentials(out, result.a_rows, result.b_rows,
                            (prepared["A"].out_dir, prepared["B"].out_dir),
                            f"{names[1]} vs {names[0]}")
    for side in sides:
        if side.blocked:
            console.print(f"[red]side {side.name} did not run: every trial failed[/red] "
                          f"({side.blocked.splitlines()[0]})", soft_wrap=True)
    rows = [r for rows in result.rows.values() for r in rows]
    if any(r.get("client_saturated") for r in rows):
        console.print("[yellow]! the load tool saturated its CPU in some trials: this "
                      "comparison may be client-bound and hide server-side changes[/yellow]")
    if args.output:
        args.output.write_text(markdown(results, [], *names, note=PAIRED_NOTE))
        out.print(f"markdown report: {args.output}")
    dirs = " and ".join(str(p.out_dir) for p in prepared.values())
    out.print(f"results: {dirs} (order seed {result.seed})")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    result.check_store()
    return 1 if result.failed or (regressed and args.fail_on_regression) else 0
