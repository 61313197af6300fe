"""`kvperf regressions --bisect` end to end (docs/guide/continuous.md "Change points"): a
stored history of the fixture's ``steps`` branch (tests/fixtures/valkey_steps.py) measured at
every commit but ``steps-3`` (the slow one) and ``steps-4``, so its SET change point spans two
unmeasured commits; the bisection builds them for real, times them against the last commit
before the change (timing: what --bisect measures) and names ``steps-3``. A GET change point
between two adjacent measured commits is reported as that commit, with nothing to bisect. Bad
bisect input exits 2 before any build; a second run resumes the finished bisection.

The history itself is synthetic (seed-format rows pushed with ``kvperf db push``, commit
times from ``kvperf track determine`` of the real branch): its numbers only have to put the
change points where the test says; everything after them is real.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.fixtures.valkey_steps import SLOW_STEP, SPIN_STEP, step_sha, steps_repo
from tests.helpers import run_kvperf, write_config

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(2400),
              pytest.mark.alone]

CONFIG = {"duration": 1, "warmup": 0, "keyspacelen": 10000, "data_sizes": 64,
          "pipelines": 16, "clients": 4, "commands": ["SET"], "server_cpu_range": "0",
          "client_cpu_range": "1"}
MEASURED = (0, 1, 2, 5, 6, 7, 8, 9)  # base, steps-1, steps-2 | steps-5 … steps-9
GET_STEP = 6  # GET's change: between steps-5 and steps-6, both measured


def _rows(sha: str, n: int) -> list[dict[str, object]]:
    """Seed-format rows of one commit: 3 trials each of SET and GET (d=64 P=16 c=4, 100,000
    requests: a series of the history apart from the bisections' 1 s trials)."""
    levels = {"SET": 300_000.0 if n < SLOW_STEP else 120_000.0,
              "GET": 250_000.0 if n < GET_STEP else 200_000.0}
    rows = []
    for command, rps in levels.items():
        for trial, wobble in enumerate((0.995, 1.0, 1.005)):
            rows.append({"timestamp": f"2025-06-01T{n:02d}:{trial:02d}:00+00:00",
                         "commit": sha, "command": command, "data_size": 64, "pipeline": 16,
                         "clients": 4, "requests": 100000, "keyspacelen": 10000,
                         "rps": rps * wobble, "avg_latency_ms": 0.2, "min_latency_ms": 0.01,
                         "p50_latency_ms": 0.2, "p95_latency_ms": 0.4, "p99_latency_ms": 0.5,
                         "max_latency_ms": 2.0, "cluster_mode": False, "tls": False,
                         "trial": trial})
    return rows


def _history(tmp_path: Path, repo: Path) -> str:
    db = f"sqlite:///{tmp_path / 'history.db'}"
    done = run_kvperf("track", "determine", "--repo", repo, "--branch", "steps",
                      "--max-commits", "10", "--config", "config.json", "--db", db,
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = []
    for n in MEASURED:
        path = tmp_path / "history" / f"steps-{n}" / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(_rows(step_sha(repo, n), n)))
        files.append(path)
    done = run_kvperf("db", "push", *files, "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.usefixtures("no_strays")
def test_regressions_bisect_names_the_unmeasured_slow_commit(tmp_path: Path,
                                                             build_cache: Path) -> None:
    repo = steps_repo()
    sha = {n: step_sha(repo, n) for n in range(10)}
    write_config(tmp_path, [CONFIG])
    db = _history(tmp_path, repo)
    env = {"KVPERF_BUILD_CACHE": str(build_cache)}

    def regressions(*flags: str) -> tuple[int, str, str]:
        done = run_kvperf("regressions", "--db", db, "--metric", "rps", "--bisect",
                          "--repo", repo, "--results-dir", "results", *flags,
                          cwd=tmp_path, env=env, timeout=1800)
        return done.returncode, " ".join(done.stdout.split()), done.stderr

    # bad bisect input: exit 2 once the change points are known, before any build
    write_config(tmp_path, [{**CONFIG, "commands": ["GET"]}], "get.json")
    for flags, says in ((["--config", "get.json"],
                         "--series 'SET d=64 P=16 c=4' matches no series of the plan"),
                        (["--config", "config.json", "--runs", "3", "--max-runs", "2"],
                         "--max-runs (2) must be at least --runs (3)")):
        code, out, err = regressions(*flags, "--build-cache", "unused-cache")
        assert code == 2 and says in " ".join(err.split()), out + err
        assert not (tmp_path / "unused-cache" / "builds").exists()  # mirrored, not built
        assert "build of" not in out + err
    assert not (tmp_path / "results").exists()

    code, out, err = regressions("--config", "config.json", "--runs", "4")
    assert code == 0, out + err
    assert (f"not bisected: GET d=64 P=16 c=4 rps {sha[5][:12]}..{sha[6][:12]}: no "
            f"unmeasured commit between them: the change is {sha[6][:12]}") in out, out
    assert f"bisecting SET d=64 P=16 c=4 rps {sha[2][:12]}..{sha[5][:12]}" in out, out
    answer = (f"first bad (regression) commit: {sha[SLOW_STEP]} setCommand: spin "
              f"{SPIN_STEP} iterations per call")
    assert answer in out, out
    (log_path,) = (tmp_path / "results").glob("bisect-*/bisect.json")
    assert log_path.parent.name == \
        f"bisect-{sha[2][:8]}-{sha[5][:8]}-rps-SET_d=64_P=16_c=4"
    log = json.loads(log_path.read_text())
    assert (log["good"], log["bad"], log["series"], log["metric"], log["measure"]) == \
        (sha[2], sha[5], "SET d=64 P=16 c=4", "rps", "timing")
    # step 0 (steps-5), then the midpoint of steps-2..steps-5 (index 3 // 2: steps-3), bad
    # next to GOOD: found, steps-4 never run
    assert [(s["sha"], s["mark"]) for s in log["steps"]] == [
        (sha[5], "bad"), (sha[3], "bad")], log["steps"]
    for step in log["steps"]:
        (effect,) = [e for e in step["effects"] if e["series"] == "SET d=64 P=16 c=4"]
        assert effect["verdict"] == "regression" and effect["change"] < -0.3, effect
        for batch in step["batches"]:  # each batch: both sides, and one logs.txt beside them
            sides = log_path.parent / batch["label"]
            logs = (sides / "logs.txt").read_text()
            ran = sum(len(json.loads((sides / s / "metrics.json").read_text()))
                      for s in ("A", "B"))
            assert ran == 2 * batch["runs"] and logs.count("server pids") == ran, logs

    started = time.monotonic()
    code, again, err = regressions("--config", "config.json", "--runs", "4")
    assert code == 0, again + err
    assert "2 step(s) done before (--resume)" in again and answer in again, again
    assert json.loads(log_path.read_text())["steps"] == log["steps"]
    assert time.monotonic() - started < 60
