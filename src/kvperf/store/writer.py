"""Writing trials to the database: one trial (run, trial, metrics, histograms) per call.

``insert_trial`` is shared by live runs and ``kvperf db push``; a trial whose ``row_hash`` is
already stored is skipped, so writing the same row twice adds nothing. An ok trial's metrics
are added to ``metric_summary`` by an upsert in the same transaction, only when the trial row
itself was inserted, so the summary never counts a row twice; a disturbed trial (other
processes took its CPUs) is stored but left out of the summary, which history and change
points read (``--include-disturbed`` aggregates the metrics table instead). ``TrialWriter`` commits
each finished trial in its own transaction as soon as it ends; when the database is
unavailable it warns once, keeps count, and the run carries on (metrics.json stays the
source of truth); ``check`` then raises a StoreError telling the user to push later. A
write that gets no answer within the engine's client-side deadline (store/deadline.py: a hung
PostgreSQL) is such a failure too, and after it no later trial of the run is sent (each would
wait the whole bound again).
"""

from __future__ import annotations

import logging
import os
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import URL, Connection, Engine, Insert, Table, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from kvperf.core.errors import StoreError
from kvperf.results.histogram import HistogramFile
from kvperf.results.row import Row
from kvperf.store import schema
from kvperf.store.db import deadline_of, describe_error, redact
from kvperf.store.deadline import DeadlineExceeded
from kvperf.store.files import read_histograms
from kvperf.store.records import (
    RunInfo,
    histogram_values,
    metric_values,
    run_info,
    trial_values,
)

log = logging.getLogger("kvperf")


def _insert_ignore(conn: Connection, table: Table, unique: str) -> Insert:
    """INSERT … ON CONFLICT (unique) DO NOTHING in the connection's dialect."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=[unique])
    return sqlite.insert(table).on_conflict_do_nothing(index_elements=[unique])


def _summary_upsert(conn: Connection) -> Insert:
    """INSERT INTO metric_summary … ON CONFLICT (cell) DO UPDATE adding n, sum and sum of
    squares and widening min/max, in the connection's dialect."""
    table = schema.metric_summary
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(table)
    new = insert.excluded
    pairwise_min, pairwise_max = ((func.least, func.greatest) if dialect is postgresql
                                  else (func.min, func.max))  # SQLite: min/max of two args
    upsert: Insert = insert.on_conflict_do_update(
        index_elements=["series_key", "revision", "name"],
        set_={"n": table.c.n + new.n, "total": table.c.total + new.total,
              "sumsq": table.c.sumsq + new.sumsq,
              "min": pairwise_min(table.c.min, new.min),
              "max": pairwise_max(table.c.max, new.max)})
    return upsert


def add_to_summary(conn: Connection, values: dict[str, object], metric: dict[str, float]) -> None:
    """Count one newly stored trial's metrics in metric_summary (ok trials that were not
    disturbed only)."""
    if values["status"] != "ok" or values.get("disturbed") or not metric:
        return
    rows = [{"series_key": values["series_key"], "revision": values["revision"], "name": name,
             "n": 1, "total": v, "sumsq": v * v, "min": v, "max": v}
            for name, v in sorted(metric.items())]  # one lock order: no deadlocks
    conn.execute(_summary_upsert(conn), rows)


def ensure_run(conn: Connection, run: RunInfo) -> int:
    """The id of the run with ``run.key``, inserting it first if it is new."""
    values = {k: getattr(run, k) for k in ("label", "commit_sha", "source", "tool",
                                           "tool_version", "server_version", "host",
                                           "started_at", "env")}
    conn.execute(_insert_ignore(conn, schema.runs, "run_key").values(run_key=run.key, **values))
    run_id = conn.execute(select(schema.runs.c.id).where(schema.runs.c.run_key == run.key))
    return int(run_id.scalar_one())


def insert_trial(conn: Connection, run: RunInfo, row: Row, label: str | None,
                 histograms: HistogramFile | None) -> bool:
    """Store one metrics.json row with its metrics and histograms; False if already stored."""
    values = trial_values(row, label)
    exists = select(schema.trials.c.id).where(schema.trials.c.row_hash == values["row_hash"])
    if conn.execute(exists).first() is not None:
        return False
    run_id = ensure_run(conn, run)
    statement = (_insert_ignore(conn, schema.trials, "row_hash")
                 .values(run_id=run_id, **values).returning(schema.trials.c.id))
    trial_id = conn.execute(statement).scalar()
    if trial_id is None:  # a concurrent writer stored it between our check and insert
        return False
    metric = metric_values(row)
    metric_rows = [{"trial_id": trial_id, "name": name, "value": value}
                   for name, value in metric.items()]
    if metric_rows:
        conn.execute(schema.metrics.insert(), metric_rows)
    add_to_summary(conn, values, metric)
    histogram_rows = [{"trial_id": trial_id, **h} for h in histogram_values(histograms)]
    if histogram_rows:
        conn.execute(schema.histograms.insert(), histogram_rows)
    return True


class TrialWriter:
    """Live writes of a run's trials, one transaction each; failures are counted, not fatal."""

    def __init__(self, engine: Engine, url: URL) -> None:
        self.engine = engine
        self.url = url
        self.started_at = datetime.now(UTC)
        self._salt = f"{self.started_at.isoformat()}-{os.getpid()}"
        self.written = 0
        self.missing: dict[Path, int] = {}
        self.first_error: str | None = None
        self.hung = False

    def record(self, row: Row, metrics_path: Path) -> bool:
        """Commit one finished trial; on a database error warn (once) and return False."""
        if self.hung:
            self._failed(metrics_path, "")
            return False
        base = metrics_path.parent
        run = run_info(row, "live", base.name, self.started_at, self._salt)
        deadline = deadline_of(self.engine)
        try:
            with (deadline.bound("live write") if deadline else nullcontext(),
                  self.engine.begin() as conn):
                insert_trial(conn, run, row, base.name, read_histograms(base, row))
        except DeadlineExceeded as exc:
            self.hung = True
            self._failed(metrics_path, f"{exc}; later trials are not sent to it")
            return False
        except SQLAlchemyError as exc:
            self._failed(metrics_path, describe_error(exc, self.url))
            return False
        self.written += 1
        return True

    def _failed(self, metrics_path: Path, reason: str) -> None:
        if self.first_error is None:
            self.first_error = reason
            log.warning("database %s is unavailable (%s): trials are still written to %s; "
                        "push them later with `kvperf db push`", redact(self.url), reason,
                        metrics_path)
        self.missing[metrics_path] = self.missing.get(metrics_path, 0) + 1

    def check(self) -> None:
        """StoreError (exit 1) if any trial did not reach the database, saying how to fix it."""
        if not self.missing:
            return
        count = sum(self.missing.values())
        files = " ".join(str(p) for p in self.missing)
        raise StoreError(
            f"{count} finished trial(s) were not written to the database {redact(self.url)} "
            f"({self.first_error}); they are safe in metrics.json. Once the database is "
            f"reachable, run `kvperf db push {files}` with the same --db or KVPERF_DB")

    def close(self) -> None:
        self.engine.dispose()
