"""`kvperf noise`: an A/A run of one server against itself — this machine's noise, in numbers."""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table

from kvperf.analysis.comparison import (
    GroupKey,
    MetricComparison,
    compare_paired,
    describe_group,
)
from kvperf.analysis.power import runs_to_flag
from kvperf.analysis.verdict import DEFAULT_ALPHA, min_effect_for
from kvperf.cli._builds import add_build_args, build_flags, build_refs
from kvperf.cli._interleaved import add_common, check_schedule, request_from, run_sides
from kvperf.cli._paths import command_path
from kvperf.core.errors import BuildError, UsageError
from kvperf.pipeline.sides import Side, side_from_build


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "noise", help="A/A run: CV per metric and runs needed to flag 3%% and 10%% changes",
        description="Run one server against itself, interleaved, and report the coefficient "
                    "of variation per metric, the interleaved runs the verdict rule needs to "
                    "flag a 3%% or 10%% change (90%% chance, at the level a row has when its "
                    "whole series moves), and any false verdict.")
    p.add_argument("--server-bin", type=command_path,
                   help="server binary (default: the usual resolution)")
    p.add_argument("--commit", metavar="REF", help="build REF of --repo and use its server")
    add_common(p, default_runs=6)
    add_build_args(p)
    p.set_defaults(handler=handle)


FLAG_EFFECTS = (0.03, 0.10)


def _needed(c: MetricComparison, effect: float, level: float) -> str:
    """Rounds for the rule to flag ``effect`` on this row; "-" below its minimum effect."""
    runs = runs_to_flag(effect, c.ci.sd_log, min_effect_for(c.metric), level, paired=True)
    return "-" if runs is None else str(runs)


def _levels(results: list[MetricComparison]) -> dict[GroupKey, float]:
    """α × (rows of the series) / (rows): BH's level for a row when its whole series moves."""
    sizes = Counter(c.group for c in results)
    return {group: DEFAULT_ALPHA * size / len(results) for group, size in sizes.items()}


def handle(args: argparse.Namespace, console: Console) -> int:
    if args.commit and args.server_bin:
        raise UsageError("give --commit or --server-bin, not both")
    if args.commit:
        check_schedule(args, 2)
        (build,) = build_refs(build_flags(args), [args.commit], console)
        if not build.ok:
            raise BuildError(build.error or f"build of {args.commit} failed")
        sides = [side_from_build("A", build), side_from_build("B", build)]
    else:
        sides = [Side("A", args.server_bin), Side("B", args.server_bin)]
    request = request_from(args, "noise", args.seed)
    result, plan = run_sides(args, request, sides, console)
    a = plan.sides["A"]
    table = Table(title=f"A/A noise · {a.context.server_version} · {a.driver.name} · "
                        f"{request.runs} rounds")
    for name in ("series", "metric", "CV A", "CV B", "σ log-ratio",
                 *(f"runs for {e:.0%}" for e in FLAG_EFFECTS), "verdict"):
        table.add_column(name)
    results = compare_paired(result.a_rows, result.b_rows, "all")
    levels = _levels(results)
    for c in results:
        sd = c.ci.sd_log
        table.add_row(describe_group(c.group), c.metric, f"{c.base.cv:.1%}", f"{c.new.cv:.1%}",
                      "-" if math.isnan(sd) else f"{sd:.2%}",
                      *(_needed(c, e, levels[c.group]) for e in FLAG_EFFECTS),
                      c.decision.verdict.value)
    Console(width=None if sys.stdout.isatty() else 220).print(table)
    result.check_store()
    return 0
