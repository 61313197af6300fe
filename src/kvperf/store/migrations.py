"""Versioned schema migrations: numbered functions, applied in order, each recorded.

Versions:
  1 — runs, trials, metrics, histograms, commits, track_jobs, change_points (store/schema.py).
  2 — metric_summary (per series, revision and metric: n, sum, sum of squares, min, max over
      ok trials), backfilled from the stored metrics in the same transaction.
  3 — trials.disturbed (boolean, NOT NULL, default false): other processes took the trial's
      CPUs (row format 8's ``interference``). Trials stored before it were not sampled: they
      stay false, so metric_summary (which from now on leaves disturbed trials out) needs
      no rebuild.
  4 — alert_summaries and alerts (store/alerts.py): change points with a lifecycle.

A migration is ``(version, function(connection))``; ``migrate`` applies every version above
the database's one in a single transaction (PostgreSQL: under an advisory lock, so runners
starting together migrate once). When a later version changes a table, version 1 must keep
creating the version-1 tables (freeze its table list then) and the new function alters them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, MetaData, func, inspect, select, text

from kvperf.core.errors import StoreError
from kvperf.store import schema

# Arbitrary constant naming kvperf's migration lock (pg_advisory_xact_lock takes a bigint).
_LOCK_ID = 0x6B7670657266

Migration = Callable[[Connection], None]


_V1_TABLES = ("runs", "trials", "metrics", "histograms", "commits", "track_jobs",
              "change_points")


def _v1_create_tables(conn: Connection) -> None:
    """Version 1's tables; trials as version 1 had it (later versions alter it)."""
    frozen = MetaData()
    for name in _V1_TABLES:
        if name == "trials":
            schema.trials_table(frozen, 1)
        else:
            schema.metadata.tables[name].to_metadata(frozen)
    frozen.create_all(conn)


def _v2_metric_summary(conn: Connection) -> None:
    """Create metric_summary and fill it from every ok trial's stored metrics."""
    schema.metric_summary.create(conn)
    m, t, s = schema.metrics, schema.trials, schema.metric_summary
    value = m.c.value
    aggregate = (select(t.c.series_key, t.c.revision, m.c.name, func.count(value),
                        func.sum(value), func.sum(value * value), func.min(value),
                        func.max(value))
                 .select_from(m.join(t, t.c.id == m.c.trial_id))
                 .where(t.c.status == "ok")
                 .group_by(t.c.series_key, t.c.revision, m.c.name))
    columns = ["series_key", "revision", "name", "n", "total", "sumsq", "min", "max"]
    conn.execute(s.insert().from_select(columns, aggregate))


def _v3_disturbed(conn: Connection) -> None:
    """trials.disturbed, false for every stored trial."""
    default = "FALSE" if conn.dialect.name == "postgresql" else "0"
    conn.execute(text(f"ALTER TABLE trials ADD COLUMN disturbed BOOLEAN NOT NULL "
                      f"DEFAULT {default}"))


def _v4_alerts(conn: Connection) -> None:
    """The alert tables, empty (``regressions --store`` fills them)."""
    schema.alert_summaries.create(conn)
    schema.alerts.create(conn)


MIGRATIONS: tuple[tuple[int, Migration], ...] = ((1, _v1_create_tables),
                                                 (2, _v2_metric_summary),
                                                 (3, _v3_disturbed),
                                                 (4, _v4_alerts))
CURRENT_VERSION = MIGRATIONS[-1][0]


def database_version(conn: Connection) -> int:
    """The highest applied version; 0 for an empty database."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    version = conn.execute(select(func.max(schema.schema_version.c.version))).scalar()
    return int(version or 0)


def pending(version: int) -> list[tuple[int, Migration]]:
    """The migrations a database at ``version`` still needs (pure)."""
    if version > CURRENT_VERSION:
        raise StoreError(f"the database has schema version {version}, newer than this kvperf "
                         f"understands ({CURRENT_VERSION}): upgrade kvperf")
    return [(v, m) for v, m in MIGRATIONS if v > version]


def migrate(engine: Engine) -> list[int]:
    """Bring the database to CURRENT_VERSION; returns the versions applied (often none)."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        schema.schema_version.create(conn, checkfirst=True)
        applied = []
        for version, migration in pending(database_version(conn)):
            migration(conn)
            conn.execute(schema.schema_version.insert().values(
                version=version, applied_at=datetime.now(UTC)))
            applied.append(version)
        return applied
