"""`kvperf report PATH… [-o report.html] [--json FILE] [--markdown FILE]`: one
self-contained HTML page (and optionally its numbers as versioned JSON, and an A/B's markdown)
from a run or an A/B comparison; or `--history`, the stored history's page."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from kvperf.cli._common import Cli
from kvperf.cli._disturbed import add_include_disturbed
from kvperf.cli._environment import print_environment
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_series_filters, add_store_options, store_flags
from kvperf.pipeline.commands.report import (
    DEFAULT_METRICS,
    HistoryReported,
    corpus_request,
    report,
    report_corpus,
    report_request,
)
from kvperf.pipeline.commands.vocabulary import DEFAULT_WATER_LINE
from kvperf.pipeline.request.stored import HistoryPageRequest, ReportRequest
from kvperf.report.corpus import tables


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="one self-contained HTML report of a run or an A/B comparison",
        description="Write one HTML file that opens offline (inline styles and SVG charts): "
                    "run summary with provenance and noise warnings, throughput and latency "
                    "per series with run-to-run spread, the latency percentile spectrum of "
                    "the merged HDR histograms, and for two sides the A/B forest plot of "
                    "ratios with 95% CIs and verdicts. PATH: a label directory "
                    "(<results-dir>/<label>), a metrics.json, or a comparison's directory "
                    "(with A/ and B/); two PATHs make an A/B report (the first is the "
                    "baseline).")
    p.add_argument("paths", nargs="*", type=local_path, metavar="PATH",
                   help="label directory, metrics.json, or comparison directory")
    p.add_argument("--history", action="store_true",
                   help="instead of PATHs: the stored history (--db/--results-dir), one "
                        "chart per series and metric with its change points marked")
    g = p.add_argument_group(
        "a definition corpus", "--definitions --commit SHA [--baseline SHA]: the commit's "
        "stored definition tests (track run), each judged against the baseline's, sorted "
        "by change, with KPIs, failures, refusals and totals per tested group; exit 1 on a "
        "regression or a broken KPI")
    g.add_argument("--definitions", action="store_true",
                   help="report a commit's definition corpus from the database")
    g.add_argument("--commit", metavar="SHA", help="the commit (a prefix will do)")
    g.add_argument("--baseline", metavar="SHA", help="the commit it is judged against")
    g.add_argument("--water-line", type=float, default=DEFAULT_WATER_LINE * 100,
                   metavar="PCT", help="a single run a side is a change beyond ±PCT%% "
                                       f"(default {DEFAULT_WATER_LINE * 100:g})")
    add_series_filters(p, DEFAULT_METRICS, "--history: ")
    add_store_options(p)
    p.add_argument("-o", "--output", "--html", type=local_path,
                   help="the HTML file to write (default report.html; history.html with "
                        "--history; with --definitions only when given)")
    p.add_argument("--json", type=local_path, metavar="FILE",
                   help="also write the report's numbers as JSON (format 'kvperf_report', "
                        "versioned)")
    p.add_argument("--markdown", type=local_path, metavar="FILE",
                   help="A/B (or a run of client libraries): also write the comparison "
                        "and the client table as markdown (as compare's "
                        "--output: a PR comment)")
    add_include_disturbed(p)
    p.set_defaults(handler=handle)


def request(args: argparse.Namespace) -> ReportRequest | HistoryPageRequest:
    """argv's flags → the checked request (UsageError, exit 2, before anything is read)."""
    return report_request(paths=tuple(args.paths), history=args.history,
                          metrics=tuple(args.metric or ()), where=tuple(args.where),
                          output=args.output, json=args.json, markdown=args.markdown,
                          store=store_flags(args),
                          include_disturbed=args.include_disturbed)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    if args.definitions:
        return handle_corpus(args, cli)
    made = report(request(args), cli.world)
    written = ", ".join(map(str, made.written))
    if isinstance(made, HistoryReported):
        cli.err.print(f"history report of {made.panels} series×metric, {made.changes} change "
                      f"point(s): {written}", highlight=False, soft_wrap=True)
        return 0
    cli.err.print(f"report of {' vs '.join(made.sides)}: {written}", highlight=False,
                  soft_wrap=True)
    if made.environment is not None:
        print_environment(cli, made.environment)
    return 0


def handle_corpus(args: argparse.Namespace, cli: Cli) -> int:
    asked = corpus_request(paths=tuple(args.paths), commit=args.commit,
                           baseline=args.baseline, water_line=args.water_line,
                           output=args.output, json=args.json, markdown=args.markdown,
                           store=store_flags(args))
    found = report_corpus(asked, cli.world)
    for table in tables(found):
        cli.out.print(table, highlight=False)
    if found.notes:
        cli.out.print("refused or not run (the jobs' notes):", highlight=False)
    for note in found.notes:
        cli.out.print(f"  {escape(note)}", highlight=False, soft_wrap=True)
    for path in (asked.html, asked.markdown):
        if path is not None:
            cli.err.print(f"written: {path}", highlight=False, soft_wrap=True)
    return found.exit_code
