"""`kvperf suites`: the built-in suites, a line each (config/suites.py)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from kvperf.cli._common import Cli
from kvperf.config.suites import SUITES, suite_path
from kvperf.pipeline.request.stored import SuitesRequest


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "suites", help="list the built-in suites (kvperf run --suite NAME[,NAME…])",
        description="List the built-in suites with what each measures and its config file.")
    p.add_argument("--paths", action="store_true", help="also show each suite's JSON file")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    asked = SuitesRequest(args.paths)
    table = Table(title="Built-in suites (kvperf run --suite NAME[,NAME…] [--quick])")
    table.add_column("suite")
    table.add_column("what it runs")
    if asked.paths:
        table.add_column("config")
    for name, line in SUITES.items():
        table.add_row(name, line, *([str(suite_path(name))] if asked.paths else []))
    cli.out.print(table)
    return 0
