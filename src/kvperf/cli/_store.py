"""The store and results-directory options, declared once for every command, and the one
way the CLI opens a database (resolved, opened at the current schema, always disposed)."""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.core.errors import Interrupted, UsageError
from kvperf.store.db import Database, open_store, redact, resolve_url
from kvperf.store.deadline import parse_seconds, resolve_seconds
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

Summary_co = TypeVar("Summary_co", covariant=True)

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


def add_db_options(p: argparse.ArgumentParser, *, no_db: bool = True) -> None:
    """--db, and (for commands that write results) --no-db and --db-timeout."""
    p.add_argument("--db", metavar="URL", help=DB_HELP)
    if no_db:
        p.add_argument("--no-db", action="store_true",
                       help="write metrics.json only, no database")
        p.add_argument("--db-timeout", type=_seconds, metavar="S",
                       help="give up a PostgreSQL write that gets no answer within S seconds "
                            "(the trial stays in metrics.json; default: $KVPERF_DB_TIMEOUT, "
                            "else 10)")


def add_store_options(p: argparse.ArgumentParser) -> None:
    """--db and --results-dir, for commands that read or manage the database."""
    add_db_options(p, no_db=False)
    add_results_dir(p)


def store_name(args: argparse.Namespace) -> str:
    """The database the flags name, credentials redacted, for messages."""
    return redact(resolve_url(args.db, args.results_dir))


@contextlib.contextmanager
def opened_store(args: argparse.Namespace, console: Console | None = None
                 ) -> Iterator[Database]:
    """The database of --db/--results-dir at the current schema (StoreError if it cannot
    be used), disposed on leaving; with a console, says which database it is."""
    url = resolve_url(args.db, args.results_dir)
    if console is not None:
        console.print(f"database: {redact(url)}", highlight=False)
    engine = open_store(url)
    try:
        yield engine
    finally:
        engine.dispose()


@contextlib.contextmanager
def live_store(args: argparse.Namespace, results_dir: Path) -> Iterator[TrialWriter | None]:
    """Open the store before any trial (StoreError if unreachable), close it at the end.
    The caller then calls ``check`` (StoreError, exit 1, if some trials were not written)."""
    if args.no_db:
        yield None
        return
    url = resolve_url(args.db, results_dir)
    writer = TrialWriter(open_store(url, resolve_seconds(getattr(args, "db_timeout", None))),
                         url)
    try:
        yield writer
    finally:
        writer.close()


class Persisting(Protocol[Summary_co]):
    """A runner that writes each row as it finishes (definitions, module scenarios)."""

    metrics: MetricsFile

    def execute(self) -> Summary_co: ...


def execute_persisting(args: argparse.Namespace, results_dir: Path,
                       make: Callable[[TrialWriter | None], Persisting[Summary_co]],
                       console: Console, finished: str) -> Summary_co | None:
    """Run with the live store open; None when interrupted (every finished ``finished``
    — "test", "scenario" — is kept and said so); the store checked at the end."""
    with live_store(args, results_dir) as store:
        runner = make(store)
        try:
            summary = runner.execute()
        except Interrupted:
            console.print(f"[yellow]interrupted[/yellow]: {len(runner.metrics.new_rows)} "
                          f"finished {finished}(s) kept in {runner.metrics.path}")
            return None
    if store is not None:
        store.check()
    return summary


def add_series_filters(p: argparse.ArgumentParser, default_metrics: tuple[str, ...],
                       applies: str = "") -> None:
    """--metric and --where, as the history commands read them."""
    p.add_argument("--metric", action="append", metavar="NAME",
                   help=f"{applies}metric(s) (default: {', '.join(default_metrics)})")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help=f"{applies}filter series, e.g. command=SET pipeline=16 (repeatable)")


def log_to(out_dir: Path, echo_warnings: bool = False) -> None:
    """logs.txt in the results directory records INFO and up, as kvperf run's does
    (definitions and module runs: their progress goes to the console themselves;
    ``echo_warnings``: warnings also go to stderr, as they did before any handler)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger("kvperf")
    root.setLevel(logging.DEBUG)
    handler = logging.FileHandler(out_dir / "logs.txt")
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root.handlers = [h for h in root.handlers if not isinstance(h, logging.FileHandler)]
    root.addHandler(handler)
    if echo_warnings and not any(isinstance(h, logging.StreamHandler)
                                 and not isinstance(h, logging.FileHandler)
                                 for h in root.handlers):
        echo = logging.StreamHandler()
        echo.setLevel(logging.WARNING)
        root.addHandler(echo)
