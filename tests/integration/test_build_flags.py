"""Build flags as documented: `--repo` given as a URL (file://, cloned into a bare mirror like
any remote), `--make-args`, `--build-jobs` and a relative `--build-cache`. The repository is
the toy stand-in of tests/unit/sourcebuild/toy_repo.py (its "server" only prints a version), so the
build is real and fast and the trials fail at server start, with that reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_kvperf
from tests.unit.sourcebuild.toy_repo import make_toy_repo

pytestmark = pytest.mark.integration


@pytest.mark.usefixtures("no_strays")
def test_repo_url_make_args_build_jobs_and_relative_cache(tmp_path: Path) -> None:
    toy = make_toy_repo(tmp_path / "toy")
    done = run_kvperf("run", "--repo", f"file://{toy}", "--commits", "v1", "--make-args",
                      "FLAVOR=fast", "--build-jobs", "1", "--build-cache", "cache",
                      "--label", "l", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # the toy server cannot serve
    cache = tmp_path / "cache"
    assert len(list((cache / "mirrors").glob("toy-*.git"))) == 1  # cloned from the URL
    (log,) = (cache / "logs").glob("*.log")
    assert log.read_text().splitlines()[0] == "$ make -j1 FLAVOR=fast"
    assert (cache / "builds" / "make-calls.txt").read_text() == "building with FLAVOR=fast\n"
    (record,) = (cache / "builds").glob("*/.kvperf-build.json")
    assert json.loads(record.read_text())["make_args"] == ["FLAVOR=fast"]
    (metrics,) = (tmp_path / "results" / "l").glob("*/metrics.json")
    rows = json.loads(metrics.read_text())
    assert rows and all(r["status"] == "failed" and "sha=toy" in r["error"] for r in rows)
    assert {r["commit"] for r in rows} == {json.loads(record.read_text())["sha"]}
