"""Versioned schema migrations: numbered functions, applied in order, each recorded.

Versions:
  1 — runs, trials, metrics, histograms, commits, track_jobs, change_points (store/schema.py).

A migration is ``(version, function(connection))``; ``migrate`` applies every version above
the database's one in a single transaction (PostgreSQL: under an advisory lock, so runners
starting together migrate once). When a later version changes a table, version 1 must keep
creating the version-1 tables (freeze its table list then) and the new function alters them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, func, inspect, select, text

from kvperf.core.errors import StoreError
from kvperf.store import schema

# Arbitrary constant naming kvperf's migration lock (pg_advisory_xact_lock takes a bigint).
_LOCK_ID = 0x6B7670657266

Migration = Callable[[Connection], None]


def _v1_create_tables(conn: Connection) -> None:
    tables = [t for t in schema.metadata.sorted_tables if t.name != "schema_version"]
    schema.metadata.create_all(conn, tables=tables)


MIGRATIONS: tuple[tuple[int, Migration], ...] = ((1, _v1_create_tables),)
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
