"""The main job as a user runs it: `kvperf run` with no arguments from an empty directory,
the built-in default config against the default server, in quick mode. `./scripts/test
--fast` runs this one integration test beside the unit tests and static checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import read_metrics, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.smoke]


@pytest.mark.usefixtures("no_strays")
def test_kvperf_run_with_no_arguments_measures_the_default_matrix(tmp_path: Path) -> None:
    done = run_kvperf("run", "--quick", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")  # relative default: ./results/<label>/
    assert {(r["command"], r["pipeline"]) for r in rows} == {
        ("SET", 1), ("SET", 16), ("GET", 1), ("GET", 16)}
    for row in rows:
        assert row["status"] == "ok" and row["rps"] > 0, row
        assert row["server"]["calls"] > 0 and row["server"]["cpu_us_per_request"] > 0, row
    (get,) = [r for r in rows if r["command"] == "GET" and r["pipeline"] == 1]
    assert get["checks"]["hit_ratio"] == 1.0, get["checks"]  # the keyspace was seeded
    assert "SET" in done.stdout and "GET" in done.stdout  # the table
