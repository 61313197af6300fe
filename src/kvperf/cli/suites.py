"""`kvperf suites`: the built-in suites, a line each (config/suites.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from kvperf.config.suites import SUITES, suite_path


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "suites", help="list the built-in suites (kvperf run --suite NAME[,NAME…])",
        description="List the built-in suites with what each measures and its config file.")
    p.add_argument("--paths", action="store_true", help="also show each suite's JSON file")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, console: Console) -> int:
    table = Table(title="Built-in suites (kvperf run --suite NAME[,NAME…] [--quick])")
    table.add_column("suite")
    table.add_column("what it runs")
    if args.paths:
        table.add_column("config")
    for name, line in SUITES.items():
        table.add_row(name, line, *([str(suite_path(name))] if args.paths else []))
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    return 0
