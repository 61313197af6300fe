"""`kvperf compare`: interleaved A/B of two server binaries with paired statistics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.verdict import Verdict
from kvperf.cli._interleaved import add_common, run_sides
from kvperf.core.errors import UsageError
from kvperf.report.comparison import PAIRED_NOTE, markdown, terminal_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="interleaved A/B of two server binaries",
        description="Run the same matrix on two servers, alternating A and B trial by trial in "
                    "a random (seeded) order, then judge every metric with paired statistics.")
    p.add_argument("refs", nargs="*", metavar="REF", help="two git refs (needs the build stage)")
    p.add_argument("--server-bin", action="append", default=[], metavar="PATH",
                   help="server binary of A, then of B (give it twice)")
    add_common(p, default_runs=8)
    p.add_argument("--metrics", choices=("all", "rps", "latency"), default="all")
    p.add_argument("--output", type=Path, help="write the markdown report here")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any row is a regression")
    p.set_defaults(handler=handle)


def _binaries(args: argparse.Namespace) -> tuple[str, str]:
    if args.refs:
        raise UsageError("comparing git refs needs the build stage, which is not in this "
                         "version yet; build both and pass --server-bin A --server-bin B")
    if len(args.server_bin) != 2:
        raise UsageError(f"give --server-bin exactly twice (A then B), got "
                         f"{len(args.server_bin)}")
    return args.server_bin[0], args.server_bin[1]


def handle(args: argparse.Namespace, console: Console) -> int:
    bins = _binaries(args)
    result, a, b = run_sides(args, bins, "compare", console)
    names = (f"A {a.context.server_version}", f"B {b.context.server_version}")
    results = compare_paired(result.a_rows, result.b_rows, args.metrics)
    out = Console(width=None if sys.stdout.isatty() else 220)
    out.print(terminal_table(results, *names))
    failed = sum(1 for r in result.a_rows + result.b_rows if r["status"] != "ok")
    if any(r.get("client_saturated") for r in result.a_rows + result.b_rows):
        console.print("[yellow]! the load tool saturated its CPU in some trials: this "
                      "comparison may be client-bound and hide server-side changes[/yellow]")
    if args.output:
        args.output.write_text(markdown(results, [], *names, note=PAIRED_NOTE))
        out.print(f"markdown report: {args.output}")
    out.print(f"results: {a.out_dir} and {b.out_dir} (order seed {result.seed})")
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in results)
    result.check_store()
    return 1 if failed or (regressed and args.fail_on_regression) else 0
