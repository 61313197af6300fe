"""The store and results-directory options, declared once for every command, and the flags
as given (pipeline/request/common.py checks them; pipeline/run/storage.py opens the store)."""

from __future__ import annotations

import argparse

from kvperf.cli._paths import local_path
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import parse_seconds
from kvperf.pipeline.request.common import StoreFlags

DB_HELP = ("database URL (postgresql://user:pw@host/db or sqlite:///path); default: "
           "$KVPERF_DB, else <results-dir>/kvperf.db")
RESULTS_DIR_HELP = ("where results go, and where the default SQLite file kvperf.db lives "
                    "(default: results)")


def _seconds(text: str) -> float:
    try:
        return parse_seconds(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_results_dir(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--results-dir", type=local_path, default="results", help=RESULTS_DIR_HELP)


def add_db_options(p: argparse.ArgumentParser) -> None:
    """--db, --no-db and --db-timeout: the commands that write results."""
    p.add_argument("--db", metavar="URL", help=DB_HELP)
    p.add_argument("--no-db", action="store_true", help="write metrics.json only, no database")
    p.add_argument("--db-timeout", type=_seconds, metavar="S",
                   help="give up a PostgreSQL write that gets no answer within S seconds "
                        "(the trial stays in metrics.json; default: $KVPERF_DB_TIMEOUT, "
                        "else 10)")


def add_store_options(p: argparse.ArgumentParser) -> None:
    """--db and --results-dir, for commands that read or manage the database."""
    p.add_argument("--db", metavar="URL", help=DB_HELP)
    add_results_dir(p)


def store_flags(args: argparse.Namespace) -> StoreFlags:
    """The flags of add_store_options."""
    return StoreFlags(args.db, args.results_dir)


def writer_flags(args: argparse.Namespace) -> StoreFlags:
    """The flags of add_db_options and add_results_dir."""
    return StoreFlags(args.db, args.results_dir, args.no_db, args.db_timeout)


def add_series_filters(p: argparse.ArgumentParser, default_metrics: tuple[str, ...],
                       applies: str = "") -> None:
    """--metric and --where, as the history commands read them."""
    p.add_argument("--metric", action="append", metavar="NAME",
                   help=f"{applies}metric(s) (default: {', '.join(default_metrics)})")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help=f"{applies}filter series, e.g. command=SET pipeline=16 (repeatable)")
