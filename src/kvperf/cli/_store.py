"""The --db / --no-db options shared by run, compare and noise, and the live writer's life."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

from kvperf.store.db import open_store, resolve_url
from kvperf.store.writer import TrialWriter

DB_HELP = ("database URL (postgresql://user:pw@host/db or sqlite:///path); default: "
           "$KVPERF_DB, else <results-dir>/kvperf.db")


def add_db_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="URL", help=DB_HELP)
    p.add_argument("--no-db", action="store_true",
                   help="write metrics.json only, no database")


@contextlib.contextmanager
def live_store(args: argparse.Namespace, results_dir: Path) -> Iterator[TrialWriter | None]:
    """Open the store before any trial (StoreError if unreachable), close it at the end.
    The caller then calls ``check`` (StoreError, exit 1, if some trials were not written)."""
    if args.no_db:
        yield None
        return
    url = resolve_url(args.db, results_dir)
    writer = TrialWriter(open_store(url), url)
    try:
        yield writer
    finally:
        writer.close()
