"""`kvperf db push FILE…` and `kvperf db migrate`: fill and upgrade the store."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_store_options, store_flags
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.commands.db import PushResult, db_migrate, db_push, db_push_request


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("db", help="database: push result files, migrate",
                              description="Manage the results database (SQLite or PostgreSQL).")
    sub = p.add_subparsers(dest="db_command", metavar="SUBCOMMAND", required=True)
    push = sub.add_parser("push", help="import metrics.json files (idempotent)",
                          description="Import metrics.json files (kvperf's or the seed "
                                      "system's) with their histograms. Rows already stored "
                                      "are skipped: pushing a file twice adds nothing.")
    push.add_argument("files", nargs="+", type=local_path, metavar="FILE",
                      help="metrics.json files")
    add_store_options(push)
    push.set_defaults(handler=handle_push)
    mig = sub.add_parser("migrate", help="create or upgrade the schema",
                         description="Bring the database to the current schema version.")
    add_store_options(mig)
    mig.set_defaults(handler=handle_migrate)


def handle_push(args: argparse.Namespace, cli: Cli) -> int:
    asked = db_push_request(tuple(args.files), store_flags(args))

    def pushed(path: Path, result: PushResult) -> None:
        cli.err.print(f"{path}: {result.added} row(s) added, {result.present} already "
                      f"present", highlight=False)

    done = db_push(asked, cli.world, pushed)
    cli.err.print(f"database: {done.database}", highlight=False)
    return 0


def handle_migrate(args: argparse.Namespace, cli: Cli) -> int:
    found = db_migrate(store_request(store_flags(args)))
    done = (f"applied version(s) {', '.join(map(str, found.applied))}" if found.applied
            else "up to date")
    cli.err.print(f"{found.database}: schema version {found.version} ({done})",
                  highlight=False)
    return 0
