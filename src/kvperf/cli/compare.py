"""`kvperf compare`: interleaved A/B of two refs (built), or of N ≥ 2 server binaries
(the first is the baseline; one table of ratios against it): flags → the checked request
(pipeline/request/sides.py) → pipeline/sides/interleaved.py → the verdicts → the exit code."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from kvperf.analysis.comparison import MetricComparison, compare_paired, compare_sides
from kvperf.analysis.verdict import Verdict
from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._clients import add_client_args
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._definitions import add_definition_args, definition_flags
from kvperf.cli._disturbed import add_disturbed_args, interference_flags, print_disturbed
from kvperf.cli._interleaved import add_common
from kvperf.cli._measure import add_compare_arguments, add_water_line, instruction_verdicts
from kvperf.cli._module_sides import (
    add_module_source_args,
    handle_module_sides,
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
from kvperf.cli._trace import add_trace_args, handle_trace_compare
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import refusals_of
from kvperf.pipeline.commands.compare import compare_request
from kvperf.pipeline.definitions.definition_runs import compare_definitions
from kvperf.pipeline.definitions.definitions import DefinitionRun
from kvperf.pipeline.request.sides import CompareFlags, CompareRequest
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import compare
from kvperf.pipeline.sides.sides import PreparedSides
from kvperf.report.comparison import (
    PAIRED_NOTE,
    markdown,
    sides_markdown,
    sides_table,
    terminal_table,
)
from kvperf.report.memory import memory_table
from kvperf.results.row import is_ok


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
        runs=args.runs, tool=args.tool, label=args.label, seed=args.seed,
        schedule=args.schedule, measure=args.measure, keys=args.keys,
        profile=profile_settings(args), metrics=args.metrics, output=args.output,
        fail_on_regression=args.fail_on_regression, water_line=args.water_line,
        min_effect=args.min_effect, build=build_flags(args), store=writer_flags(args),
        remote=remote_flags(args), definitions=definition_flags(args),
        interference=interference_flags(args), clients=tuple(args.clients),
        clients_dirs=tuple(args.clients_dir), concurrency=args.concurrency,
        rate_sweep=rate_sweep_flags(args)))


def _name(side: str, prepared: Prepared | DefinitionRun) -> str:
    ctx = prepared.context
    what = ctx.commit[:12] if ctx.commit else ctx.server_version
    return f"{side} {what}"


def handle(args: argparse.Namespace, cli: Cli) -> int:
    refuse_module_flags(args)
    if args.module_repo is not None:  # module refs on one server (cli/_module_sides.py)
        return handle_module_sides(args, cli, "compare", tuple(args.refs))
    if args.trace is not None:
        return handle_trace_compare(args, cli)
    asked = request(args)
    hooks = ConsoleHooks(cli)
    for path, why in asked.skipped:
        cli.err.print(f"[yellow]skipped: {path}: {why}[/yellow]", soft_wrap=True)
    if asked.definitions is not None:
        hooks.refused(refusals_of(asked.definitions))
        return _definitions(cli, asked, hooks)
    result, plan = compare(asked, cli.world, hooks)
    prepared, out = plan.sides, cli.out
    if asked.count > 2 or asked.sides.measure == Measure.MEMORY:
        return _many(cli, asked, result, plan)
    names = ((f"A {plan.labels['A']}", f"B {plan.labels['B']}") if asked.clients
             else (_name("A", prepared["A"]), _name("B", prepared["B"])))
    if asked.sides.measure != Measure.TIMING:
        return instruction_verdicts(asked, result, [p.out_dir for p in prepared.values()],
                                    names, out)
    results = compare_paired(result.a_rows, result.b_rows, asked.metrics, asked.rule)
    _verdicts(out, results, names)
    print_knees(out, result.a_rows, result.b_rows,
                (prepared["A"].out_dir, prepared["B"].out_dir), names, asked.rule)
    print_profile(out, result.a_rows + result.b_rows, plan.out_dir)
    if asked.sides.profile or any(r.get("profile") for r in result.a_rows):  # config's sets
        print_differentials(out, result.a_rows, result.b_rows,
                            (prepared["A"].out_dir, prepared["B"].out_dir),
                            f"{names[1]} vs {names[0]}")
    return _finish(cli, asked, result, plan, results,
                   lambda: markdown(results, [], *names, note=PAIRED_NOTE))


def _verdicts(out: Console, results: list[MetricComparison], names: tuple[str, str]) -> None:
    """The verdict table, or why there is none (every row profiled, none timed: an empty
    table would read as a comparison that found nothing)."""
    if results:
        out.print(terminal_table(results, *names))
    else:
        out.print(f"{names[1]} vs {names[0]}: no timing verdicts, no series has timed rows "
                  "on both sides (profiled trials are not timed)", highlight=False)


def _definitions(cli: Cli, asked: CompareRequest, hooks: ConsoleHooks) -> int:
    """`compare A B --definitions …`: the definitions' tests interleaved, judged per test."""
    rows, prepared = compare_definitions(asked, cli.world, hooks)
    names = (_name("A", prepared.runs["A"]), _name("B", prepared.runs["B"]))
    out = cli.out
    results = compare_paired(rows["A"], rows["B"], asked.metrics, asked.rule)
    _verdicts(out, results, names)
    print_profile(out, rows["A"] + rows["B"], prepared.runs["A"].out_dir.parent)
    if asked.output:
        asked.output.write_text(markdown(results, [], *names, note=PAIRED_NOTE))
        out.print(f"markdown report: {asked.output}")
    dirs = " and ".join(str(run.out_dir) for run in prepared.runs.values())
    out.print(f"results: {dirs} (order seed {prepared.seed})")
    print_disturbed(out, cli.err, [r for side_rows in rows.values() for r in side_rows])
    failed = sum(1 for side_rows in rows.values() for r in side_rows if not is_ok(r))
    if failed:
        cli.err.print(f"[red]{failed} test(s) failed[/red] (see the results' logs.txt)")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    return 1 if failed or (regressed and asked.fail_on_regression) else 0


def _finish(cli: Cli, asked: CompareRequest, result: SidesResult, plan: PreparedSides,
            results: list[MetricComparison], report: Callable[[], str]) -> int:
    """Blocked sides, saturation, the markdown file, where the results are; the exit code."""
    prepared, out = plan.sides, cli.out
    for name, side in prepared.items():
        blocked = side.options.blocked
        if blocked:
            cli.err.print(f"[red]side {name} did not run: every trial failed[/red] "
                          f"({escape(blocked.splitlines()[0])})", soft_wrap=True)
    rows = [r for rows in result.rows.values() for r in rows]
    if any(r.get("client_saturated") for r in rows):
        cli.err.print("[yellow]! the load tool saturated its CPU in some trials: this "
                      "comparison may be client-bound and hide server-side changes[/yellow]")
    print_disturbed(out, cli.err, rows)
    if asked.output:
        asked.output.write_text(report())
        out.print(f"markdown report: {asked.output}")
    dirs = " and ".join(str(p.out_dir) for p in prepared.values())
    out.print(f"results: {dirs} (order seed {result.seed})")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    result.check_store()
    return 1 if result.failed or (regressed and asked.fail_on_regression) else 0


def _many(cli: Cli, asked: CompareRequest, result: SidesResult, plan: PreparedSides) -> int:
    """N servers (or --measure memory): one table of ratios against the baseline, the
    memory table when rows carry memory; exit code as for two sides."""
    out = cli.out
    labels = {name: f"{name}: {plan.labels.get(name, name)}" for name in result.rows}
    metrics = "memory" if asked.sides.measure == Measure.MEMORY else asked.metrics
    results = compare_sides(result.rows, metrics, asked.rule)
    table = memory_table({labels[n]: rows for n, rows in result.rows.items()})
    if table is not None and asked.sides.measure == Measure.MEMORY:
        out.print(table)
    out.print(sides_table(results, labels))
    rows = [r for rows in result.rows.values() for r in rows]
    print_profile(out, rows, plan.out_dir)
    base = next(iter(result.rows))
    if asked.sides.profile:
        for name in list(result.rows)[1:]:
            print_differentials(out, result.rows[base], result.rows[name],
                                (plan.sides[base].out_dir, plan.sides[name].out_dir),
                                f"{labels[name]} vs {labels[base]}")
    return _finish(cli, asked, result, plan, results, lambda: sides_markdown(results, labels))
