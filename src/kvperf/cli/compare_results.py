"""`kvperf compare-results BASELINE NEW`: compare two metrics.json files (kvperf or seed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import compare
from kvperf.analysis.verdict import DEFAULT_WATER_LINE, Rule, Verdict
from kvperf.cli._paths import local_path
from kvperf.core.errors import StoreError, UsageError
from kvperf.report.comparison import markdown, terminal_table
from kvperf.results.row import Row
from kvperf.store.files import read_rows


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare-results", help="compare two metrics.json files",
        description="Group rows by their parameters (never by env), summarize runs as "
                    "value (n, σ, CV), and judge each change: ratio with 95% CI, t-test p "
                    "(Benjamini–Hochberg adjusted), verdict; one value per side: the % "
                    "change against --water-line, without statistics.")
    p.add_argument("baseline", type=local_path, help="baseline metrics.json")
    p.add_argument("new", type=local_path, help="new metrics.json")
    p.add_argument("--metrics", choices=("all", "rps", "latency", "memory"), default="all",
                   help="which metrics to compare (default all)")
    p.add_argument("--output", type=local_path, help="write the markdown report here")
    p.add_argument("--graphs", type=local_path, metavar="DIR", help="write PNG graphs into DIR")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any row is a regression")
    add_water_line(p)
    p.set_defaults(handler=handle)


def add_water_line(p: argparse.ArgumentParser) -> None:
    p.add_argument("--water-line", type=float, default=DEFAULT_WATER_LINE * 100, metavar="PCT",
                   help="with one value per side (no statistics): a change beyond ± PCT%% is "
                        f"a regression or improvement (default {DEFAULT_WATER_LINE * 100:g})")


def rule_from(args: argparse.Namespace) -> Rule:
    """The verdict rule with the --water-line given (checked: a percentage in (0, 100))."""
    if not 0 < args.water_line < 100:
        raise UsageError(f"--water-line must be a percentage in (0, 100), got "
                         f"{args.water_line:g}")
    return Rule(water_line=args.water_line / 100)


def _read(path: Path) -> list[Row]:
    try:
        return read_rows(path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def handle(args: argparse.Namespace, console: Console) -> int:
    base_rows, new_rows = _read(args.baseline), _read(args.new)
    results, unmatched = compare(base_rows, new_rows, args.metrics, rule_from(args))
    if not results:
        profiled = any(row.get("profile") for row in base_rows + new_rows)
        hint = (" (rows measured under --profile are never compared: perf perturbs their "
                "timing)" if profiled else "")
        raise UsageError(f"{args.baseline} and {args.new} share no series with ok rows to "
                         f"compare{hint}")
    names = (str(args.baseline), str(args.new))
    out = Console(width=None if sys.stdout.isatty() else 220)
    out.print(terminal_table(results, *names))
    report = markdown(results, unmatched, *names)
    if args.output:
        args.output.write_text(report)
        out.print(f"markdown report: {args.output}")
    if args.graphs:
        from kvperf.report.graphs import write_graphs

        written = write_graphs(results, args.graphs, names)
        out.print(f"{len(written)} graphs in {args.graphs}")
    regressions = sum(1 for r in results if r.decision.verdict is Verdict.REGRESSION)
    return 1 if regressions and args.fail_on_regression else 0
