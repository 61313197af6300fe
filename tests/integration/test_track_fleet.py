"""Commit tracking against a real PostgreSQL 15 (and SQLite): concurrent claimers, a claimer
killed with -9 while holding its claim, the retry cap, cleanup, fencing."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.sourcebuild.git_log import branch_commits
from kvperf.store import track
from kvperf.store.db import open_store, parse_url
from tests.helpers import KVPERF, run_kvperf
from tests.pg import PASSWORD
from tests.unit.fleet.gitrepo import make_repo

pytestmark = pytest.mark.integration
LEASE = 6

# One claimer process: claim → "run" (append the sha to a shared log, O_APPEND) → mark
# complete, until the queue is empty.
WORKER = """
import os, sys, time
from kvperf.sourcebuild.git_log import branch_commits
from kvperf.core.errors import UsageError
from kvperf.store import track
from kvperf.store.db import open_store, parse_url
engine = open_store(parse_url(sys.argv[1]))
log, runner = sys.argv[2], sys.argv[3]
while True:
    job = track.claim(engine, runner, lease_seconds=60)
    if job is None:
        break
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{job.sha} {runner}\\n".encode())
    os.close(fd)
    time.sleep(0.02)
    track.mark(engine, job.id, "complete", attempt=job.attempts)
"""


def _determine(db: str, tmp_path: Path, commits: int, *extra: str) -> list[str]:
    shas = make_repo(tmp_path / "repo", commits)
    config = tmp_path / "bench.json"
    config.write_text(json.dumps([{"requests": 1000, "commands": ["SET"]}]))
    done = run_kvperf("track", "determine", "--repo", tmp_path / "repo", "--branch",
                      "unstable", "--max-commits", str(commits), "--config", config,
                      "--db", db, *extra)
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert sorted(json.loads(done.stdout)["enqueued"]) == sorted(shas)
    return shas


def _claim(db: str, runner: str, lease: float = 60, *extra: str) -> dict[str, object] | None:
    done = run_kvperf("track", "claim", "--runner", runner, "--lease", str(lease),
                      "--db", db, *extra)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] | None = json.loads(done.stdout)
    return result


@pytest.fixture(params=["postgresql", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'track.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


def test_four_concurrent_claimers_run_each_commit_exactly_once(db: str, tmp_path: Path) -> None:
    shas = _determine(db, tmp_path, 20)
    log = tmp_path / "runs.log"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, db, str(log), f"r{i}"])
               for i in range(4)]
    for w in workers:
        assert w.wait(timeout=120) == 0
    runs = [line.split() for line in log.read_text().splitlines()]
    assert sorted(sha for sha, _ in runs) == sorted(shas)          # each exactly once
    engine = open_store(parse_url(db))
    assert track.counts(engine) == {"queued": 0, "in_progress": 0, "complete": 20, "failed": 0}
    assert all(j.attempts == 1 for j in track.query(engine, limit=100))


@pytest.mark.slow
def test_killed_claimer_commit_is_claimed_again_after_lease(pg_url: str,
                                                            tmp_path: Path) -> None:
    shas = _determine(pg_url, tmp_path, 3)
    victim = subprocess.Popen(
        [str(KVPERF), "track", "claim", "--runner", "victim", "--lease", str(LEASE),
         "--hold", "120", "--db", pg_url],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert victim.stdout is not None
    held = json.loads(victim.stdout.readline())
    claimed_at = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert held["state"] == "in_progress" and held["attempt"] == 1
    # While the lease runs, the others get the two other commits and never the held one.
    engine = open_store(parse_url(pg_url))
    others = [track.claim(engine, "other") for _ in range(3)]
    assert time.monotonic() - claimed_at < LEASE, "machine too slow for the lease"
    assert sorted(o.sha for o in others[:2] if o) == sorted(set(shas) - {held["sha"]})
    assert others[2] is None
    time.sleep(max(0.0, claimed_at + LEASE + 0.5 - time.monotonic()))
    again = track.claim(engine, "rescuer")
    assert again is not None
    assert (again.id, again.attempts, again.claimed_by) == (held["id"], 2, "rescuer")
    # The dead runner's late mark is refused (fencing by attempt); the rescuer's is accepted.
    late = run_kvperf("track", "mark", "--id", str(held["id"]), "--attempt", "1", "complete",
                      "--db", pg_url)
    assert late.returncode == 1 and "another runner" in late.stderr
    assert track.mark(engine, held["id"], "complete", attempt=2).state == "complete"


def test_retry_cap_leaves_a_failing_job_failed(pg_url: str, tmp_path: Path) -> None:
    _determine(pg_url, tmp_path, 1, "--max-attempts", "2")
    engine = open_store(parse_url(pg_url))
    first = track.claim(engine, "r")
    assert first is not None and first.attempts == 1
    track.mark(engine, first.id, "failed", "build failed 1", attempt=1)
    second = _claim(pg_url, "r")
    assert second is not None and second["attempt"] == 2
    done = run_kvperf("track", "mark", "--id", str(second["id"]), "failed", "--error",
                      "build failed 2", "--db", pg_url)
    assert done.returncode == 0, done.stderr
    assert track.claim(engine, "r") is None
    listed = run_kvperf("track", "query", "--json", "--db", pg_url)
    (row,) = json.loads(listed.stdout)
    assert (row["state"], row["attempts"], row["last_error"]) == ("failed", 2, "build failed 2")


def test_cleanup_requeues_expired_and_fails_at_cap(pg_url: str, tmp_path: Path) -> None:
    engine = open_store(parse_url(pg_url))
    _determine(pg_url, tmp_path, 2, "--max-attempts", "1")
    a = track.claim(engine, "r", lease_seconds=0.2)
    assert a is not None
    engine2 = open_store(parse_url(pg_url))
    with engine2.begin() as conn:  # give the second job attempts to spare
        conn.execute(track.track_jobs.update().values(max_attempts=3)
                     .where(track.track_jobs.c.id != a.id))
    b = track.claim(engine, "r", lease_seconds=0.2)
    assert b is not None
    time.sleep(0.4)
    done = track.cleanup(engine)
    assert (done.requeued, done.failed) == (1, 1)
    states = {j.id: j.state for j in track.query(engine)}
    assert states == {a.id: "failed", b.id: "queued"}
    track.mark(engine, track.claim(engine, "r").id, "complete")  # type: ignore[union-attr]
    assert track.cleanup(engine, delete_completed_days=0).deleted == 1


def test_config_tracked_by_content_not_name(pg_url: str, tmp_path: Path) -> None:
    _determine(pg_url, tmp_path, 2)
    engine = open_store(parse_url(pg_url))
    items = [track.TrackedCommit(c.sha, c.committed_at, c.author, c.subject)
             for c in branch_commits(str(tmp_path / "repo"), "unstable", 2)]

    def enqueue(content: str, arch: str = platform.machine()) -> list[str]:
        config = track.config_from_text("bench.json", content)
        return track.enqueue(engine, "repo", "unstable", items, config, arch)

    assert enqueue('[ {"commands": ["SET"],   "requests": 1000} ]') == []  # reformatted only
    assert len(enqueue(json.dumps([{"requests": 2000, "commands": ["SET"]}]))) == 2
    assert len(enqueue(json.dumps([{"requests": 2000, "commands": ["SET"]}]), "aarch64")) == 2
    assert track.counts(engine)["queued"] == 6


def test_bad_inputs_are_usage_errors(pg_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    done = run_kvperf("track", "determine", "--repo", tmp_path, "--config", bad, "--db", pg_url)
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    make_repo(tmp_path / "repo", 1)
    bad.write_text("[]")
    done = run_kvperf("track", "determine", "--repo", tmp_path / "repo", "--branch", "nope",
                      "--config", bad, "--db", pg_url)
    assert done.returncode == 2 and "branch 'nope'" in done.stderr
    assert PASSWORD not in done.stderr
    with pytest.raises(UsageError, match="--lease"):
        track.claim(open_store(parse_url(pg_url)), "r", lease_seconds=0)
