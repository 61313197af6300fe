"""`kvperf noise`: an A/A run of one server against itself — this machine's noise, in numbers."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from kvperf.analysis.comparison import compare_paired, describe_group
from kvperf.analysis.power import runs_needed
from kvperf.cli._builds import add_build_args, build_flags, build_refs
from kvperf.cli._interleaved import (
    Side,
    add_common,
    check_schedule,
    run_sides,
    side_from_build,
)
from kvperf.cli._paths import command_path
from kvperf.core.errors import BuildError, UsageError


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "noise", help="A/A run: CV per metric and runs needed to detect 2%% and 3%% effects",
        description="Run one server against itself, interleaved, and report the coefficient "
                    "of variation per metric and the interleaved runs needed to detect a 2%% "
                    "or 3%% effect (α=0.01, 90%% power), plus any false verdict.")
    p.add_argument("--server-bin", type=command_path,
                   help="server binary (default: the usual resolution)")
    p.add_argument("--commit", metavar="REF", help="build REF of --repo and use its server")
    add_common(p, default_runs=6)
    add_build_args(p)
    p.set_defaults(handler=handle)


def _needed(sd: float, effect: float) -> str:
    return "-" if math.isnan(sd) else str(runs_needed(sd, effect))


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
    result, prepared = run_sides(args, sides, "noise", console)
    a = prepared["A"]
    table = Table(title=f"A/A noise · {a.context.server_version} · {a.driver.name} · "
                        f"{args.runs} rounds")
    for name in ("series", "metric", "CV A", "CV B", "σ log-ratio", "runs for 2%",
                 "runs for 3%", "verdict"):
        table.add_column(name)
    for c in compare_paired(result.a_rows, result.b_rows, "all"):
        sd = c.ci.sd_log
        table.add_row(describe_group(c.group), c.metric, f"{c.base.cv:.1%}", f"{c.new.cv:.1%}",
                      "-" if math.isnan(sd) else f"{sd:.2%}", _needed(sd, 0.02),
                      _needed(sd, 0.03), c.decision.verdict.value)
    Console(width=None if sys.stdout.isatty() else 220).print(table)
    result.check_store()
    return 0
