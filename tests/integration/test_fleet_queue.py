"""The definition-job queue with many runners (issue 39), scaled down from
benchmarks/fleet_queue.py (50 runners × 5,000 jobs, figures in docs/PERFORMANCE.md): 8
runner processes on a real PostgreSQL 15 claim, renew and mark 300 sleeping definition
jobs while 2 of them are SIGKILLed mid-lease — every job complete and marked done once,
the killed runners' jobs taken over after their leases expired."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.fleet_queue import run

pytestmark = pytest.mark.integration


def test_eight_runners_three_hundred_jobs_two_killed(pg_url: str, tmp_path: Path) -> None:
    found = run(pg_url, runners=8, jobs=300, kill=2, logs=tmp_path / "logs", timeout=90)
    assert len(found.killed) == 2
    assert found.complete == 300
    assert max(found.done.values()) == 1  # none run twice
    assert len(found.done) + len(found.unlogged) == 300  # none lost
    assert set(found.unlogged.values()) <= set(found.killed)
    assert found.taken_over + len(found.unlogged) >= 2  # the killed runners' held jobs
    assert found.ok
