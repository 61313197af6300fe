"""`kvperf report PATH… [-o report.html] [--json FILE] [--markdown FILE]`: one
self-contained HTML page (and optionally its numbers as versioned JSON, and an A/B's markdown)
from a run or an A/B comparison."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.pipeline.report import ReportRequest, write_report


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="one self-contained HTML report of a run or an A/B comparison",
        description="Write one HTML file that opens offline (inline styles and SVG charts): "
                    "run summary with provenance and noise warnings, throughput and latency "
                    "per series with run-to-run spread, the latency percentile spectrum of "
                    "the merged HDR histograms, and for two sides the A/B forest plot of "
                    "ratios with 95%% CIs and verdicts. PATH: a label directory "
                    "(<results-dir>/<label>), a metrics.json, or a comparison's directory "
                    "(with A/ and B/); two PATHs make an A/B report (the first is the "
                    "baseline).")
    p.add_argument("paths", nargs="+", type=local_path, metavar="PATH",
                   help="label directory, metrics.json, or comparison directory")
    p.add_argument("-o", "--output", type=local_path, default="report.html",
                   help="the HTML file to write (default report.html)")
    p.add_argument("--json", type=local_path, metavar="FILE",
                   help="also write the report's numbers as JSON (format 'kvperf_report', "
                        "versioned)")
    p.add_argument("--markdown", type=local_path, metavar="FILE",
                   help="A/B only: also write the comparison as markdown (as compare's "
                        "--output: a PR comment)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, console: Console) -> int:
    report = write_report(ReportRequest(args.paths, args.output, args.json,
                                         args.markdown))
    sides = " vs ".join(s.name for s in report.sources)
    written = ", ".join(str(p) for p in (args.output, args.json, args.markdown) if p)
    console.print(f"report of {sides}: {written}", highlight=False, soft_wrap=True)
    return 0
