"""A definition corpus as fleet jobs (issue 39), on a real PostgreSQL 15 and real
valkey-server: ``track determine --definitions`` enqueues one job per (commit, shard of
definitions sharing a preload); two ``track run`` runners share the corpus, one SIGKILLed
mid-job: its lease expires, the other takes the job over and skips what the dead one
stored — every definition stored exactly once, none lost; ``track status`` shows the
corpus done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from kvperf.cli.main import main
from kvperf.store import track
from kvperf.store.db import open_store, parse_url
from kvperf.store.schema import trials
from tests.helpers import KVPERF, require_binary, run_kvperf
from tests.unit.fleet.gitrepo import make_repo

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_strays")]
DEFINITIONS = 20
LEASE = 5

TINY = """\
version: 0.4
name: corpus-{n:02d}
tested-groups: [{group}]
dbconfig:
  preload_tool:
    tool: memtier_benchmark
    arguments: >-
      --data-size 10 --ratio 1:0 --key-pattern P:P --key-minimum 1 --key-maximum {keys}
      -n allkeys -c 1 -t 1 --pipeline 50 --hide-histogram
  check:
    keyspacelen: {keys}
clientconfig:
  tool: memtier_benchmark
  arguments: >-
    --data-size 10 --ratio 1:1 --key-pattern R:R --key-minimum 1 --key-maximum {keys}
    --test-time 1 -c 2 -t 1 --pipeline 4 --hide-histogram
"""


def write_corpus(root: Path, count: int, preloads: int) -> list[str]:
    """``count`` one-second definitions, ``preloads`` distinct preloads among them (the
    key range), in two tested groups; their names."""
    (root / "strings").mkdir(parents=True)
    for n in range(count):
        keys = 200 + 100 * (n % preloads)
        (root / "strings" / f"corpus-{n:02d}.yml").write_text(
            TINY.format(n=n, keys=keys, group="string" if n % 2 else "generic"))
    return [f"corpus-{n:02d}" for n in range(count)]


def _runner(name: str, db: str, cwd: Path, log: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(KVPERF), "track", "run", "--runner", name, "--corpus", "corpus",
         "--server-bin", require_binary("valkey-server"), "--lease", str(LEASE),
         "--results-dir", f"results-{name}", "--db", db, *extra],
        cwd=cwd, stdout=subprocess.DEVNULL, stderr=log.open("w"), text=True)


def _first_test_done(log: Path, runner: subprocess.Popen[str]) -> int:
    """Wait until the runner has finished a test of its first job; that job's id."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = log.read_text()
        if "[1/2]" in text:
            return int(text.split("job ", 1)[1].split(":", 1)[0])
        assert runner.poll() is None, text
        time.sleep(0.05)
    raise AssertionError(f"no test finished in 60 s: {log.read_text()}")


def test_two_runners_share_a_corpus_one_killed_mid_job(pg_url: str, tmp_path: Path) -> None:
    names = write_corpus(tmp_path / "corpus", DEFINITIONS, preloads=10)
    (sha,) = make_repo(tmp_path / "repo", 1)
    done = run_kvperf("track", "determine", "--repo", "repo", "--max-commits", "1",
                      "--definitions", "corpus/strings", "--corpus", "corpus", "--shard-size", "2",
                      "--db", pg_url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["shards"]) == 10  # 20 files, 10 preloads, 2 a shard
    victim = _runner("victim", pg_url, tmp_path, tmp_path / "victim.log")
    rescuer = _runner("rescuer", pg_url, tmp_path, tmp_path / "rescuer.log", "--wait")
    held = _first_test_done(tmp_path / "victim.log", victim)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert rescuer.wait(timeout=150) == 0, (tmp_path / "rescuer.log").read_text()
    engine = open_store(parse_url(pg_url))
    with engine.connect() as conn:
        stored = [r["definition"]["name"] for (r,) in conn.execute(
            select(trials.c.row).where(trials.c.commit_sha == sha))]
    assert sorted(stored) == names  # each definition exactly once: none twice, none lost
    jobs = {j.id: j for j in track.query(engine, limit=100)}
    assert {j.state for j in jobs.values()} == {"complete"}
    assert (jobs[held].attempts, jobs[held].claimed_by) == (2, "rescuer")
    status = run_kvperf("track", "status", "--json", "--db", pg_url)
    assert json.loads(status.stdout) == [{"sha": sha, "jobs": 10, "done": True,
                                          "complete": 10, "failed": 0, "in_progress": 0,
                                          "queued": 0}]


def test_bad_corpus_inputs_are_exit_2_naming_what_is_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "corpus", 2, preloads=1)
    (tmp_path / "outside.yml").write_text(TINY.format(n=9, keys=100, group="string"))
    make_repo(tmp_path / "repo", 1)
    (tmp_path / "c.json").write_text("[]")
    db = ["--db", f"sqlite:///{tmp_path / 't.db'}"]
    determine = ["track", "determine", "--repo", "repo", *db]
    for argv, needle in (
            ([*determine, "--config", "c.json", "--definitions", "corpus/strings"],
             "--config FILE (a benchmark config) or --definitions"),
            ([*determine, "--definitions", "outside.yml", "--corpus", "corpus"],
             "outside.yml' is not under --corpus"),
            ([*determine, "--definitions", "corpus/strings", "--corpus", "corpus",
              "--shard-size", "0"], "--shard-size must be at least 1"),
            (["track", "determine", "--module-repo", "repo", "--definitions", "corpus/strings",
              *db], "--definitions runs on the server's commits"),
            (["track", "run", "--runner", "r", "--corpus", "nope", *db],
             "nope' is not a directory"),
            (["report", "--definitions", *db], "--definitions needs --commit SHA"),
            (["report", "--definitions", "--commit", "abc", *db],
             "--commit abc: no results for that commit")):
        assert main(argv) == 2, argv
        assert needle in capsys.readouterr().err, argv


def test_config_claims_leave_the_corpus_to_track_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`track claim` (the workflow's config loop) never takes a definition job; `track
    status` shows the corpus pending until `track run` drains it."""
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "corpus", 3, preloads=3)
    make_repo(tmp_path / "repo", 2)
    db = ["--db", f"sqlite:///{tmp_path / 't.db'}"]
    assert main(["track", "determine", "--repo", "repo", "--max-commits", "2", "--definitions",
                 "corpus/strings", "--corpus", "corpus", "--shard-size", "1", *db]) == 0
    capsys.readouterr()
    assert main(["track", "claim", "--runner", "config-loop", *db]) == 0
    assert capsys.readouterr().out.strip() == "null"
    assert main(["track", "status", *db]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("│ 3 │ 0 │ 0 │ 0 │ 3 │ pending │") == 2, out


def test_an_interrupted_runner_fails_its_job_for_the_next_to_finish(tmp_path: Path) -> None:
    """SIGTERM mid-job: the runner marks its job failed (claimable again at once) and exits
    130; the next runner runs only the test the first did not store."""
    names = write_corpus(tmp_path / "corpus", 2, preloads=1)
    (sha,) = make_repo(tmp_path / "repo", 1)
    db = f"sqlite:///{tmp_path / 't.db'}"
    done = run_kvperf("track", "determine", "--repo", "repo", "--max-commits", "1",
                      "--definitions", "corpus/strings", "--corpus", "corpus", "--db", db,
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first = _runner("first", db, tmp_path, tmp_path / "first.log")
    _first_test_done(tmp_path / "first.log", first)
    os.kill(first.pid, signal.SIGTERM)
    assert first.wait(timeout=60) == 130, (tmp_path / "first.log").read_text()
    engine = open_store(parse_url(db))
    (job,) = track.query(engine)
    assert job.state == "failed" and "runner first: interrupted" in (job.last_error or "")
    second = _runner("second", db, tmp_path, tmp_path / "second.log")
    assert second.wait(timeout=60) == 0, (tmp_path / "second.log").read_text()
    assert "[1/1] corpus-01" in (tmp_path / "second.log").read_text()
    with engine.connect() as conn:
        stored = [r["definition"]["name"] for (r,) in conn.execute(
            select(trials.c.row).where(trials.c.commit_sha == sha))]
    assert sorted(stored) == names
    (job,) = track.query(engine)
    assert (job.state, job.attempts) == ("complete", 2)
