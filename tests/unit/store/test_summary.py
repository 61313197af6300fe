"""metric_summary equals a direct aggregate of the stored metrics over ok trials that were
not disturbed: after live writes, after pushing the same file twice (nothing counted twice),
and after migration 2 backfills it from existing metrics — on SQLite and on a real
PostgreSQL. Disturbed trials are stored, flagged, and left out of history and change points
unless asked for (tests/unit/store/test_disturbed_history.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, delete, func, select, text

from kvperf.store import schema
from kvperf.store.history import cells
from kvperf.store.migrations import CURRENT_VERSION, migrate
from kvperf.store.push import push_file
from kvperf.store.writer import TrialWriter

Key = tuple[str, str, str]
Aggregate = tuple[int, float, float, float, float]


def _row(command: str, commit: str, run: int, rps: float, status: str = "ok") -> dict[str, Any]:
    return {"kvperf_format": 1, "commit": commit, "command": command, "data_size": 16,
            "pipeline": 1, "clients": 10, "requests": 1000, "run": run, "status": status,
            "rps": rps, "p99_latency_ms": rps / 1e6, "server": {"cpu_us_per_request": 2.5 + run}}


def _file(directory: Path, rows: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True)
    path = directory / "metrics.json"
    path.write_text(json.dumps(rows))
    return path


def _summary(engine: Engine) -> dict[Key, Aggregate]:
    s = schema.metric_summary.c
    with engine.connect() as conn:
        rows = conn.execute(select(s.series_key, s.revision, s.name, s.n, s.total, s.sumsq,
                                   s.min, s.max))
        return {(r[0], r[1], r[2]): (int(r[3]), *map(float, r[4:])) for r in rows}


def _direct(engine: Engine) -> dict[Key, Aggregate]:
    m, t = schema.metrics, schema.trials
    v = m.c.value
    query = (select(t.c.series_key, t.c.revision, m.c.name, func.count(v), func.sum(v),
                    func.sum(v * v), func.min(v), func.max(v))
             .select_from(m.join(t, t.c.id == m.c.trial_id))
             .where(t.c.status == "ok", t.c.disturbed.is_(False))
             .group_by(t.c.series_key, t.c.revision, m.c.name))
    with engine.connect() as conn:
        return {(r[0], r[1], r[2]): (int(r[3]), *map(float, r[4:])) for r in conn.execute(query)}


def _assert_equal(engine: Engine) -> dict[Key, Aggregate]:
    summary, direct = _summary(engine), _direct(engine)
    assert summary.keys() == direct.keys()
    for key, (n, *rest) in direct.items():
        assert summary[key][0] == n, key
        assert summary[key][1:] == pytest.approx(tuple(rest), rel=1e-12), key
    return summary


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'k.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    engine = create_engine(url)
    migrate(engine)
    yield engine
    engine.dispose()


def test_summary_matches_direct_aggregate(engine: Engine, tmp_path: Path) -> None:
    writer = TrialWriter(engine, engine.url)
    live = tmp_path / "live" / "metrics.json"
    for run, rps in enumerate((1000.0, 1100.0, 900.0)):
        assert writer.record(_row("SET", "aaa", run, rps), live)
    assert writer.record(_row("SET", "aaa", 9, 5.0, status="error"), live)
    assert writer.record(_row("SET", "aaa", 0, 1000.0), live)  # the same row again
    summary = _assert_equal(engine)
    rps = [v for k, v in summary.items() if k[1] == "aaa" and k[2] == "rps"]
    assert rps == [(3, 3000.0, 1000.0**2 + 1100.0**2 + 900.0**2, 900.0, 1100.0)]

    pushed = _file(tmp_path / "bbb", [_row("SET", "bbb", r, 2000.0 + r) for r in range(4)]
                   + [_row("GET", "aaa", 1, 700.0), _row("SET", "aaa", 1, 1100.0)])
    assert push_file(engine, pushed).added == 5  # the live SET/aaa/run 1 row is present
    after_first = _assert_equal(engine)
    assert push_file(engine, pushed).added == 0
    assert _summary(engine) == after_first
    assert {c.n for c in cells(engine, ["aaa"], ["rps"], {"command": "SET"})} == {3}

    # an older database: metrics stored before migration 2 are backfilled by it (and
    # migration 3 adds trials.disturbed, false for every stored trial; 4 the alert tables)
    with engine.begin() as conn:
        schema.alerts.drop(conn)
        schema.alert_summaries.drop(conn)
        schema.metric_summary.drop(conn)
        conn.execute(text("ALTER TABLE trials DROP COLUMN disturbed"))
        conn.execute(delete(schema.schema_version).where(schema.schema_version.c.version >= 2))
    assert migrate(engine) == [2, 3, 4] and CURRENT_VERSION == 4
    backfilled = _assert_equal(engine)
    assert backfilled.keys() == after_first.keys()
    for key, (n, *rest) in after_first.items():
        assert backfilled[key][0] == n and backfilled[key][1:] == pytest.approx(tuple(rest))
