"""`kvperf noise`: an A/A run of one server against itself — this machine's noise, in numbers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.noise import noise_rows
from kvperf.cli._builds import add_build_args, build_flags, build_refs
from kvperf.cli._interleaved import add_common, check_schedule, request_from, run_sides
from kvperf.cli._paths import command_path
from kvperf.core.errors import BuildError, UsageError
from kvperf.pipeline.sides import Side, side_from_build
from kvperf.report.noise import noise_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "noise", help="A/A run: CV per metric and runs needed to flag 3%% and 10%% changes",
        description="Run one server against itself, interleaved, and report the coefficient "
                    "of variation per metric, the interleaved runs the verdict rule needs to "
                    "flag a 3% or 10% change (90% chance, at the level a row has when its "
                    "whole series moves), and any false verdict.")
    p.add_argument("--server-bin", type=command_path,
                   help="server binary (default: the usual resolution)")
    p.add_argument("--commit", metavar="REF", help="build REF of --repo and use its server")
    add_common(p, default_runs=6)
    add_build_args(p)
    p.set_defaults(handler=handle)


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
    rows = noise_rows(compare_paired(result.a_rows, result.b_rows, "all"))
    title = (f"A/A noise · {a.context.server_version} · {a.driver.name} · "
             f"{request.runs} rounds")
    Console(width=None if sys.stdout.isatty() else 220).print(noise_table(rows, title))
    result.check_store()
    return 0
