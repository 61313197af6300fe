"""`kvperf bisect GOOD BAD --repo R`: the first commit that moved a series' metric, by
interleaved A/B steps (pipeline/bisect.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from kvperf.analysis.bisect import COUNTED_METRICS, DEFAULT_RUNS, TIMING_METRICS, series_text
from kvperf.analysis.bisect_log import BisectLog, Step
from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.regressions import Finding
from kvperf.analysis.verdict import Verdict
from kvperf.cli._builds import BuildFlags, add_build_args, build_flags, build_one
from kvperf.cli._choices import enum_choice
from kvperf.cli._definitions import (
    add_definition_args,
    planned_definitions,
    run_on_sides,
    uses_definition_flags,
)
from kvperf.cli._interleaved import run_sides
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_db_options, add_results_dir
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan
from kvperf.pipeline.ab import SidesResult
from kvperf.pipeline.bisect import (
    BUDGET_FACTOR,
    BisectRequest,
    BisectResult,
    ChangePoint,
    bisect,
    change_point_request,
)
from kvperf.pipeline.sides import Side, SidesRequest
from kvperf.report.bisect import answer, markdown, moved_table, step_line, steps_table
from kvperf.sourcebuild.builder import Build, Builder
from kvperf.sourcebuild.git_log import CommitInfo


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bisect", help="find the first commit of GOOD..BAD that moved a series' metric",
        description="Binary search over GOOD..BAD (first parents): each step builds a commit "
                    "and compares it with GOOD by interleaved A/B runs, judged by compare's "
                    "verdict rule. Step 0 (GOOD vs BAD) must find a regression or an "
                    "improvement; commits that do not build, or stay inconclusive within "
                    "--max-runs, are skipped. The log (bisect.json) is written after every "
                    "batch of runs: --resume continues it. With --definitions, each step "
                    "runs the selected benchmark definitions' tests (timing) and --series "
                    "names a test.")
    p.add_argument("good", metavar="GOOD", help="a ref where the metric is as before")
    p.add_argument("bad", metavar="BAD", help="a later ref where it moved")
    p.add_argument("--config", type=local_path,
                   help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--series", help="the series to follow, e.g. 'SET P=16' (COMMAND and "
                                    "key=value of d, P, c, io; required when the config "
                                    "has more than one series)")
    p.add_argument("--metric", help=f"default: {COUNTED_METRICS[0]} with --measure "
                                    f"instructions, rps with timing; one of "
                                    f"{', '.join(TIMING_METRICS + COUNTED_METRICS)}")
    p.add_argument("--measure", type=enum_choice(Measure),
                   choices=(Measure.TIMING, Measure.INSTRUCTIONS),
                   help="instructions (default where valgrind is installed) or timing")
    p.add_argument("--runs", type=int, help="runs per side per step (default "
                   f"{DEFAULT_RUNS[Measure.INSTRUCTIONS]} instructions, "
                   f"{DEFAULT_RUNS[Measure.TIMING]} timing)")
    p.add_argument("--max-runs", type=int, help="runs per side an inconclusive step may "
                   f"grow to before it is skipped (default {BUDGET_FACTOR} × --runs)")
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT * 100,
                   metavar="PCT", help="instruction mode: smallest change flagged, in "
                                       f"percent (default {DEFAULT_MIN_EFFECT * 100:g}%%)")
    p.add_argument("--resume", action="store_true",
                   help="continue the bisection logged under --results-dir/--label")
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: bisect-GOOD-BAD shas)")
    p.add_argument("--seed", type=int, help="seed of the side orders (default: random, "
                                            "recorded per batch)")
    p.add_argument("--output", type=local_path, help="write a markdown report here")
    add_db_options(p)
    add_build_args(p)
    add_definition_args(p)
    p.set_defaults(handler=handle)


class CliBench:
    """Builds with progress output, interleaved runs with progress and the store."""

    def __init__(self, args: argparse.Namespace, flags: BuildFlags, console: Console) -> None:
        self.args, self.console = args, console
        self.builder = Builder(flags.cache, flags.repo, flags.make_args, flags.jobs)
        self.results: list[SidesResult] = []

    def resolve(self, ref: str) -> str:
        with self.console.status(f"fetching {escape(self.builder.repo)}"):
            return self.builder.resolve(ref)

    def commits(self, good: str, bad: str) -> list[CommitInfo]:
        return self.builder.first_parent_range(good, bad)

    def build(self, sha: str) -> Build:
        return build_one(self.builder, "commit", sha, self.console)

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult:
        result, _ = run_sides(self.args, request, sides, self.console, self.args.results_dir)
        self.results.append(result)
        return result

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult:
        rows, prepared = run_on_sides(self.args, plans, sides, out_dir, runs, seed,
                                      self.console)
        return SidesResult(rows, prepared.seed)  # the store was checked by run_on_sides


class Printer:
    def __init__(self, out: Console) -> None:
        self.out = out

    def started(self, log: BisectLog, resumed: int) -> None:
        again = f", {resumed} step(s) done before (--resume)" if resumed else ""
        self.out.print(f"bisecting {len(log.commits) - 1} commits {log.good[:12]}.."
                       f"{log.bad[:12]} on {log.series} {log.metric} ({log.measure}, "
                       f"{log.runs} runs per side per step{again})", highlight=False)

    def step_finished(self, log: BisectLog, step: Step) -> None:
        self.out.print(escape(step_line(log, step)), highlight=False, soft_wrap=True)


def _request(args: argparse.Namespace, flags: BuildFlags, console: Console) -> BisectRequest:
    if not 0 <= args.min_effect < 100:
        raise UsageError(f"--min-effect must be a percentage in [0, 100), got "
                         f"{args.min_effect}")
    plans: tuple[Plan, ...] = ()
    if args.definitions is not None:
        plans = tuple(r for r in planned_definitions(args, console) if isinstance(r, Plan))
        if not plans:
            raise UsageError("none of the selected definitions can run here (reasons above)")
    elif uses_definition_flags(args):
        raise UsageError("the definition selection flags (--tests-regexp, --topologies, "
                         "--override-test-time …) apply only with --definitions")
    return BisectRequest(args.good, args.bad, flags.repo, args.series, args.metric,
                         args.measure, args.runs, args.max_runs, args.config, args.tool,
                         args.results_dir, args.label, args.seed, args.resume,
                         args.min_effect / 100, plans,
                         tuple(str(p.resolve()) for p in args.definitions or ()))


def _report(args: argparse.Namespace, result: BisectResult, out: Console) -> None:
    log = result.log
    out.print(steps_table(log))
    for line in answer(log):
        out.print(escape(line), highlight=False, soft_wrap=True)
    if result.moved:
        out.print(moved_table(log, result.moved))
    if getattr(args, "output", None):
        args.output.write_text(markdown(log, result.moved))
        out.print(f"markdown report: {args.output}")
    out.print(f"log: {result.directory / 'bisect.json'}", highlight=False)


def handle(args: argparse.Namespace, console: Console) -> int:
    flags = build_flags(args)
    out = Console(width=None if sys.stdout.isatty() else 220)
    bench = CliBench(args, flags, console)
    result = bisect(_request(args, flags, console), bench, Printer(out))
    for done in bench.results:
        done.check_store()
    if not result.differ:
        log = result.log
        e = log.steps[0].effect(log.series) if log.steps else None
        why = f"{e.verdict}: {e.reason}" if e else "no result"
        what = "do not differ" if e and e.verdict is Verdict.NO_CHANGE else \
            f"could not be told apart within {log.max_runs} runs per side"
        console.print(f"[red]GOOD and BAD {what} on {escape(log.series)} {log.metric} "
                      f"({escape(why)})[/red]: nothing to bisect; log: "
                      f"{result.directory / 'bisect.json'}", soft_wrap=True)
        return 1
    _report(args, result, out)
    return 0


def add_change_point_arguments(p: argparse.ArgumentParser) -> None:
    """`kvperf regressions --bisect`: the flags its bisections need."""
    g = p.add_argument_group("bisect (with --bisect)")
    g.add_argument("--bisect", action="store_true",
                   help="bisect each listed change point whose range spans unmeasured "
                        "commits (timing, the change point's metric and series; needs --repo "
                        "and the config the history ran with, --config)")
    g.add_argument("--config", type=local_path, help="JSON config of the bisections")
    g.add_argument("--runs", type=int, help=f"runs per side per step (default "
                                            f"{DEFAULT_RUNS[Measure.TIMING]})")
    g.add_argument("--max-runs", type=int, help="runs per side before an inconclusive "
                                                f"step is skipped (default {BUDGET_FACTOR} × "
                                                "--runs)")
    p.set_defaults(no_db=False, tool=None, seed=None)
    add_build_args(p)


def check_change_point_flags(args: argparse.Namespace) -> None:
    """--bisect's flags, checked before the history is read (UsageError, exit 2)."""
    if args.bisect:
        build_flags(args)
        if args.runs is not None and args.runs < 1:
            raise UsageError(f"--runs must be at least 1, got {args.runs}")


def bisect_change_points(args: argparse.Namespace, findings: list[Finding],
                         console: Console, out: Console) -> None:
    """Bisect every change point (pipeline/bisect.py: ``change_point_request``), each in
    its own results directory (resumed when its log exists)."""
    if not findings:
        return
    flags = build_flags(args)
    bench = CliBench(args, flags, console)
    base = BisectRequest("", "", flags.repo, runs=args.runs, max_runs=args.max_runs,
                         config=args.config, results_dir=args.results_dir)
    for f in findings:
        point = ChangePoint(f.last_before.sha, f.first_after.sha, series_text(f.params),
                            f.metric)
        what = f"{point.series} {point.metric} {f.commit_range}"
        request = change_point_request(base, point, bench)
        if isinstance(request, str):
            out.print(f"not bisected: {escape(what)}: {escape(request)}", highlight=False)
            continue
        out.print(f"bisecting {escape(what)}", highlight=False)
        result = bisect(request, bench, Printer(out))
        if result.differ:
            _report(args, result, out)
        else:
            out.print(f"{escape(what)}: the two commits do not differ in this run",
                      highlight=False)
    for done in bench.results:
        done.check_store()
