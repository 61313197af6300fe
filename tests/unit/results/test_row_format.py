"""metrics.json format versions: older rows are upgraded step by step, newer ones refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.core.errors import UsageError
from kvperf.results.row import (
    FORMAT_VERSION,
    is_disturbed,
    is_ok,
    is_timed,
    mark_failed,
    upgrade,
)
from kvperf.store.files import read_rows
from tests.helpers import run_kvperf


def _v1_row(rps: float, run: int) -> dict[str, Any]:
    """A row as kvperf wrote it in format 1 (no measure, instructions or revision)."""
    return {"kvperf_format": 1, "command": "SET", "data_size": 3, "pipeline": 1,
            "clients": 50, "requests": 1000, "rps": rps, "p50_latency_ms": 50_000 / rps,
            "status": "ok", "run": run, "trial_id": "t1", "env": {}}


def test_a_version_1_file_is_upgraded_and_read(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps([_v1_row(100_000.0, 1), _v1_row(101_000.0, 2)]))
    rows = read_rows(path)
    assert [r["kvperf_format"] for r in rows] == [FORMAT_VERSION] * 2
    assert rows[0]["measure"] == "timing" and rows[0]["instructions"] is None
    assert rows[0]["revision"] is None and rows[0]["definition"] is None
    assert rows[0]["profile"] is None
    done = run_kvperf("compare-results", path, path)
    assert done.returncode == 0, done.stderr
    assert "no change" in done.stdout


def test_a_future_format_is_refused_with_exit_2_naming_the_version(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps([{**_v1_row(100_000.0, 1), "kvperf_format": 99}]))
    with pytest.raises(UsageError, match="kvperf_format 99 is newer"):
        read_rows(path)
    done = run_kvperf("compare-results", path, path)
    assert done.returncode == 2
    assert "kvperf_format 99" in done.stderr and "metrics.json" in done.stderr


@pytest.mark.parametrize("version", ["3", 0, True])
def test_a_format_that_is_not_a_version_is_refused(version: object) -> None:
    with pytest.raises(UsageError, match="is not a format version"):
        upgrade({"kvperf_format": version}, "x.json")


def test_seed_rows_pass_unchanged_and_count_as_ok() -> None:
    seed = {"command": "SET", "rps": 1.0}
    assert upgrade(dict(seed), "seed.json") == seed and is_ok(seed)


def test_mark_failed_only_turns_ok_rows() -> None:
    row: dict[str, Any] = {"status": "ok", "error": None}
    mark_failed(row, "partner failed")
    assert (row["status"], row["error"]) == ("failed", "partner failed")
    mark_failed(row, "again")
    assert row["error"] == "partner failed"


def test_format_6_rows_gain_a_null_scenario_and_scenario_rows_keep_theirs() -> None:
    """6 → 7: ``scenario`` on every row; a module scenario's format-6 row (which carried it
    without a version bump) keeps its object."""
    matrix = {**_v1_row(100_000.0, 1), "kvperf_format": 6}
    scenario = {**_v1_row(100_000.0, 1), "kvperf_format": 6,
                "scenario": {"group": "1", "id": "ingest"}}
    assert upgrade(matrix, "m.json")["scenario"] is None  # type: ignore[arg-type]
    kept = upgrade(scenario, "s.json")  # type: ignore[arg-type]
    assert kept["scenario"] == {"group": "1", "id": "ingest"}
    assert kept["kvperf_format"] == FORMAT_VERSION == 10


def test_format_7_rows_gain_a_null_interference_and_stay_timed() -> None:
    """7 → 8: ``interference`` on every row, null for rows made before it was sampled; such
    a row is neither disturbed nor excluded from timing statistics."""
    old = upgrade({**_v1_row(100_000.0, 1), "kvperf_format": 7}, "m.json")  # type: ignore[arg-type]
    assert old["kvperf_format"] == FORMAT_VERSION == 10 and old["interference"] is None
    assert is_timed(old) and not is_disturbed(old)
    excluded = {**old, "interference": {"disturbed": True, "excluded": True}}
    assert is_disturbed(excluded) and not is_timed(excluded)  # type: ignore[arg-type]
    kept = {**old, "interference": {"disturbed": True, "excluded": False}}
    assert is_disturbed(kept) and is_timed(kept)  # type: ignore[arg-type]


def test_format_8_rows_gain_a_null_harness() -> None:
    """8 → 9: ``harness`` on every row, null but on a client library's row (run --client)."""
    old = upgrade({**_v1_row(100_000.0, 1), "kvperf_format": 8}, "m.json")  # type: ignore[arg-type]
    assert old["kvperf_format"] == FORMAT_VERSION == 10 and old["harness"] is None
    client = upgrade({**_v1_row(100_000.0, 1), "kvperf_format": 9,  # type: ignore[arg-type]
                      "harness": {"name": "redis-py"}}, "m.json")
    assert client["harness"]["name"] == "redis-py"


def test_format_9_client_rows_keep_their_process_total_apart_from_the_window() -> None:
    """9 → 10: a client row's CPU per operation was its process tree's (wait4, start-up and
    warmup included); it moves to ``process_cpu_us_per_op`` and the window's figures (the
    client's and the table's ``× kvload``) are null; kvload's rows keep theirs."""
    client = upgrade({**_v1_row(100_000.0, 1), "kvperf_format": 9,  # type: ignore[arg-type]
                      "client": {"client_cpu_us_per_request": 23.4},
                      "harness": {"name": "jedis", "cpu_us_per_op": 23.4}}, "m.json")
    assert client["kvperf_format"] == FORMAT_VERSION == 10
    assert client["harness"] == {"name": "jedis", "cpu_us_per_op": None, "cpu_window": None,
                                 "process_cpu_us_per_op": 23.4, "wire": None}
    assert client["client"]["client_cpu_us_per_request"] is None
    kvload = upgrade({**_v1_row(100_000.0, 1), "kvperf_format": 9,  # type: ignore[arg-type]
                      "client": {"client_cpu_us_per_request": 4.9}, "harness": None},
                     "m.json")
    assert kvload["client"]["client_cpu_us_per_request"] == 4.9 and kvload["harness"] is None
