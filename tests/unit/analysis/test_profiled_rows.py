"""Profiled rows never enter timing statistics (perf sampling perturbs them)."""

from __future__ import annotations

from typing import Any

from kvperf.analysis.comparison import group_rows, pair_runs
from kvperf.results.row import is_timed


def _row(run: int, profile: dict[str, Any] | None = None,
         status: str = "ok") -> dict[str, Any]:
    return {"command": "SET", "data_size": 3, "pipeline": 1, "clients": 4, "rps": 1000.0,
            "run": run, "trial_id": "t", "status": status, "profile": profile}


def test_is_timed_means_ok_and_not_profiled() -> None:
    assert is_timed(_row(1)) and is_timed({"rps": 1.0})  # seed rows: no status, no profile
    assert not is_timed(_row(1, {"nodes": []}))
    assert not is_timed(_row(1, status="failed"))


def test_groups_and_pairs_leave_profiled_rows_out() -> None:
    rows = [_row(1), _row(2, {"nodes": []})]
    assert [len(g) for g in group_rows(rows).values()] == [1]
    pairs = pair_runs(rows, [_row(1, {"nodes": []}), _row(2)])
    assert pairs == {}
