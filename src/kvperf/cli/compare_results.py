"""`kvperf compare-results BASELINE NEW`: compare two metrics.json files (kvperf or seed)."""

from __future__ import annotations

import argparse
from typing import Any

from kvperf.cli._common import Cli
from kvperf.cli._environment import print_environment
from kvperf.cli._measure import add_water_line
from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.compare_results import compare_results, compare_results_request
from kvperf.pipeline.request.stored import CompareResultsRequest
from kvperf.report.comparison import stop_lines, terminal_table


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


def request(args: argparse.Namespace) -> CompareResultsRequest:
    return compare_results_request(
        baseline=args.baseline, new=args.new, metrics=args.metrics, output=args.output,
        graphs=args.graphs, fail_on_regression=args.fail_on_regression,
        water_line=args.water_line)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    compared = compare_results(request(args))
    out = cli.out
    out.print(terminal_table(compared.results, *compared.names))
    for line in stop_lines(compared.stops):
        out.print(f"rounds · {line}", highlight=False)
    print_environment(cli, compared.environment)
    if compared.report:
        out.print(f"markdown report: {compared.report}")
    if compared.graphs:
        out.print(f"{len(compared.written)} graphs in {compared.graphs}")
    return compared.exit_code
