"""`kvperf report PATH… [-o report.html] [--json FILE] [--markdown FILE]`: one
self-contained HTML page (and optionally its numbers as versioned JSON, and an A/B's markdown)
from a run or an A/B comparison."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from kvperf.analysis.regressions import DEFAULT_METRICS
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_series_filters, add_store_options, opened_store, store_name
from kvperf.core.errors import UsageError
from kvperf.pipeline.history_report import HistoryRequest, write_history_report
from kvperf.pipeline.report import ReportRequest, write_report
from kvperf.store.history import check_metric, parse_where


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
    add_series_filters(p, DEFAULT_METRICS, "--history: ")
    add_store_options(p)
    p.add_argument("-o", "--output", type=local_path,
                   help="the HTML file to write (default report.html; history.html with "
                        "--history)")
    p.add_argument("--json", type=local_path, metavar="FILE",
                   help="also write the report's numbers as JSON (format 'kvperf_report', "
                        "versioned)")
    p.add_argument("--markdown", type=local_path, metavar="FILE",
                   help="A/B only: also write the comparison as markdown (as compare's "
                        "--output: a PR comment)")
    p.set_defaults(handler=handle)


def _history(args: argparse.Namespace, console: Console) -> int:
    if args.paths or args.markdown:
        raise UsageError("--history reads the database: give no PATH and no --markdown")
    output = args.output or local_path("history.html")
    request = HistoryRequest(tuple(check_metric(m) for m in args.metric or DEFAULT_METRICS),
                             parse_where(args.where), store_name(args), output, args.json)
    with opened_store(args) as engine:
        panels = write_history_report(engine, request)
    changes = sum(len(p.changes) for p in panels)
    written = ", ".join(str(p) for p in (output, args.json) if p)
    console.print(f"history report of {len(panels)} series×metric, {changes} change "
                  f"point(s): {written}", highlight=False, soft_wrap=True)
    return 0


def handle(args: argparse.Namespace, console: Console) -> int:
    if args.history:
        return _history(args, console)
    if not args.paths:
        raise UsageError("give a PATH (a label directory, metrics.json or comparison "
                         "directory), or --history")
    if args.metric or args.where:
        raise UsageError("--metric and --where apply only with --history")
    output = args.output or local_path("report.html")
    report = write_report(ReportRequest(args.paths, output, args.json, args.markdown))
    sides = " vs ".join(s.name for s in report.sources)
    written = ", ".join(str(p) for p in (output, args.json, args.markdown) if p)
    console.print(f"report of {sides}: {written}", highlight=False, soft_wrap=True)
    return 0
