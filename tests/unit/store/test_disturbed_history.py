"""Disturbed trials in the store: flagged in ``trials.disturbed``, left out of
metric_summary, so history, change points and the history page do not see a disturbed
run as a drop; ``include_disturbed`` aggregates every ok trial from the metrics table.
On SQLite and a real PostgreSQL (the ``pg_url`` fixture)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select

from kvperf.analysis.regressions import find_all
from kvperf.analysis.stored import to_series
from kvperf.store import schema
from kvperf.store.history import cells, disturbed_count, latest_revisions
from kvperf.store.migrations import migrate
from kvperf.store.push import push_file
from kvperf.store.series import histories
from tests.helpers import run_main

START = datetime(2026, 1, 1, tzinfo=UTC)
COMMITS = [f"c{i:02d}" for i in range(12)]
DROPPED = set(COMMITS[6:])  # where a hog ran beside some trials


def _row(commit: str, run: int, rps: float, disturbed: bool) -> dict[str, Any]:
    at = START + timedelta(hours=COMMITS.index(commit), minutes=run)
    record = {"disturbed": disturbed, "cause": "62% of cpu0 went to pid 1 (hog)"
              if disturbed else None, "excluded": False}
    return {"kvperf_format": 8, "commit": commit, "command": "SET", "data_size": 64,
            "pipeline": 1, "clients": 50, "duration": 1, "run": run, "status": "ok",
            "rps": rps, "timestamp": at.isoformat(), "interference": record}


def _history(tmp_path: Path) -> Path:
    rows = []
    for i, commit in enumerate(COMMITS):
        rows += [_row(commit, 1, 100_000.0 + 37 * i, False),
                 _row(commit, 2, 100_400.0 - 29 * i, False)]
        if commit in DROPPED:  # a quarter of the speed: a busy machine, not the code
            rows += [_row(commit, 3, 25_000.0, True), _row(commit, 4, 25_300.0, True)]
    path = tmp_path / "history" / "metrics.json"
    path.parent.mkdir()
    path.write_text(json.dumps(rows))
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    url = (f"sqlite:///{tmp_path / 'k.db'}" if request.param == "sqlite"
           else request.getfixturevalue("pg_url"))
    engine = create_engine(url)
    migrate(engine)
    assert push_file(engine, _history(tmp_path)).added == 2 * 12 + 2 * 6
    yield engine
    engine.dispose()


def test_the_flag_is_stored_and_the_summary_leaves_disturbed_trials_out(
        engine: Engine) -> None:
    t = schema.trials.c
    with engine.connect() as conn:
        flagged = conn.execute(select(t.revision).where(t.disturbed.is_(True))).scalars()
        assert sorted(set(flagged)) == sorted(DROPPED)
    rps = {c.revision: c for c in cells(engine, None, ["rps"], {})}
    assert {c.n for c in rps.values()} == {2}
    assert all(c.mean > 99_000 for c in rps.values())
    every = {c.revision: c for c in cells(engine, None, ["rps"], {"command": "SET"},
                                          include_disturbed=True)}
    assert every["c11"].n == 4 and every["c11"].mean == pytest.approx(62_697.0)
    assert every["c00"].n == 2
    assert [r.name for r in latest_revisions(engine, 3, {})] == COMMITS[-3:]
    # what history tells its reader it left out
    assert disturbed_count(engine, None, {}) == 2 * len(DROPPED)
    assert disturbed_count(engine, ["c00", "c11"], {"command": "SET"}) == 2
    assert disturbed_count(engine, None, {"pipeline": 16}) == 0


def test_change_points_ignore_disturbed_trials_unless_included(engine: Engine) -> None:
    quiet = histories(engine, ["rps"])
    assert len(quiet) == 1 and list(quiet[0].counts) == [2] * 12
    assert find_all(to_series(h) for h in quiet) == []
    loud = histories(engine, ["rps"], {"command": "SET"}, include_disturbed=True)
    assert list(loud[0].counts) == [2] * 6 + [4] * 6
    (found,) = find_all(to_series(h) for h in loud)
    assert found.direction == "regression" and found.first_after.sha == "c06"


def test_history_says_how_many_disturbed_trials_it_left_out(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    assert run_main("db", "push", _history(tmp_path), "--db", db).returncode == 0
    done = run_main("history", "--db", db, "--metric", "rps")
    assert done.returncode == 0, done.stderr
    assert "12 disturbed trial(s) left out" in done.stderr, done.stderr
    every = run_main("history", "--db", db, "--metric", "rps", "--include-disturbed")
    assert "left out" not in every.stderr, every.stderr
