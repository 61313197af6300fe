"""`kvperf suites`: the built-in suites, a line each (config/suites.py)."""

from __future__ import annotations

import argparse
from typing import Any

from kvperf.cli._common import Cli
from kvperf.pipeline.commands.suites import suites
from kvperf.pipeline.request.stored import SuitesRequest
from kvperf.report.suites import suites_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "suites", help="list the built-in suites (kvperf run --suite NAME[,NAME…])",
        description="List the built-in suites with what each measures and its config file.")
    p.add_argument("--paths", action="store_true", help="also show each suite's JSON file")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    asked = SuitesRequest(args.paths)
    cli.out.print(suites_table(suites(asked), asked.paths))
    return 0
