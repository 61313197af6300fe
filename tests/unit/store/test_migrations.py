"""Migrations: an empty database reaches the current version once; newer databases refuse."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, select

from kvperf.core.errors import StoreError
from kvperf.store import schema
from kvperf.store.migrations import CURRENT_VERSION, migrate, pending

TABLES = {"schema_version", "runs", "trials", "metrics", "histograms", "commits", "track_jobs",
          "alert_summaries", "alerts"}


def test_sqlite_migrates_once(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'k.db'}")
    assert migrate(engine) == [1, 2, 3, 4]
    assert migrate(engine) == []
    assert set(inspect(engine).get_table_names()) >= TABLES
    with engine.connect() as conn:
        versions = conn.execute(select(schema.schema_version.c.version)).scalars().all()
    assert versions == [1, 2, 3, CURRENT_VERSION]


def test_newer_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="newer than this kvperf"):
        pending(CURRENT_VERSION + 1)


@pytest.mark.integration
def test_postgres_migrates_once(pg_url: str) -> None:
    engine = create_engine(pg_url)
    assert migrate(engine) == [1, 2, 3, 4]
    assert migrate(engine) == []
    assert set(inspect(engine).get_table_names()) >= TABLES
    engine.dispose()
