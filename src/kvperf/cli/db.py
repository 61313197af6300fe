"""`kvperf db push FILE…` and `kvperf db migrate`: fill and upgrade the store."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.cli._store import add_store_options, opened_store
from kvperf.core.errors import UsageError
from kvperf.store.db import database_errors, make_engine, redact, resolve_url
from kvperf.store.migrations import CURRENT_VERSION, migrate
from kvperf.store.push import push_file


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


def handle_push(args: argparse.Namespace, console: Console) -> int:
    missing = [str(f) for f in args.files if not f.is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    url = resolve_url(args.db, args.results_dir)
    with opened_store(args) as engine:
        for path in args.files:
            with database_errors(url, f"pushing {path} to {redact(url)} failed",
                                 " (nothing of this file was stored; push it again)"):
                result = push_file(engine, path)
            console.print(f"{path}: {result.added} row(s) added, {result.present} already "
                          f"present", highlight=False)
    console.print(f"database: {redact(url)}", highlight=False)
    return 0


def handle_migrate(args: argparse.Namespace, console: Console) -> int:
    url = resolve_url(args.db, args.results_dir)
    engine = make_engine(url)
    try:
        with database_errors(url, f"cannot use database {redact(url)}"):
            applied = migrate(engine)
    finally:
        engine.dispose()
    done = f"applied version(s) {', '.join(map(str, applied))}" if applied else "up to date"
    console.print(f"{redact(url)}: schema version {CURRENT_VERSION} ({done})", highlight=False)
    return 0
