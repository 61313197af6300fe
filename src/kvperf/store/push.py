"""`kvperf db push`: import metrics.json files (kvperf's or the seed system's) idempotently.

Each file is imported in one transaction. A row already stored (same ``row_hash``, whether
written live or pushed before) is counted as present and left alone, so pushing a file twice
adds nothing. A row's label defaults to the name of the directory holding the file (the seed
system's ``results/<commit>/metrics.json`` layout).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from kvperf.store.files import read_histograms, read_rows
from kvperf.store.records import parse_timestamp, run_info
from kvperf.store.writer import insert_trial


@dataclass(frozen=True)
class PushResult:
    """What one file contributed."""

    path: Path
    added: int
    present: int


def push_file(engine: Engine, path: Path) -> PushResult:
    """Import one metrics.json file (StoreError if it is not one)."""
    rows = read_rows(path, as_written=True)
    base, source = path.parent, str(path.resolve())
    starts = [t for r in rows if (t := parse_timestamp(r.get("timestamp"))) is not None]
    started_at = min(starts) if starts else None
    added = 0
    with engine.begin() as conn:
        for row in rows:
            run = run_info(row, source, base.name, started_at)
            added += insert_trial(conn, run, row, base.name, read_histograms(base, row))
    return PushResult(path, added, len(rows) - added)
