"""`kvperf track cleanup --no-requeue-expired` through the CLI on a real SQLite store: an
expired claim is left alone (docs/guide/continuous.md "Commit tracking"), deleting completed
rows still works, and a plain cleanup then requeues it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kvperf.cli.main import main
from tests.unit.fleet.gitrepo import make_repo


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, " ".join(err.split())  # the console wraps at its width


def test_no_requeue_expired_leaves_an_expired_claim(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'track.db'}"
    make_repo(tmp_path / "repo", 2)
    (tmp_path / "bench.json").write_text(json.dumps([{"requests": 1000, "commands": ["SET"]}]))
    _cli(capsys, "track", "determine", "--repo", str(tmp_path / "repo"), "--branch",
         "unstable", "--max-commits", "2", "--config", str(tmp_path / "bench.json"), "--db", db)
    expired = json.loads(_cli(capsys, "track", "claim", "--runner", "r1", "--lease", "0.2",
                              "--db", db)[0])
    done = json.loads(_cli(capsys, "track", "claim", "--runner", "r2", "--db", db)[0])
    _cli(capsys, "track", "mark", "--id", str(done["id"]), "--attempt", "1", "complete",
         "--db", db)
    time.sleep(0.5)  # the first claim's lease is over

    _, err = _cli(capsys, "track", "cleanup", "--no-requeue-expired",
                  "--delete-completed-older-than", "0", "--db", db)
    assert "requeued 0 expired claim(s), failed 0 at the retry cap, deleted 1" in err, err
    (job,) = json.loads(_cli(capsys, "track", "query", "--json", "--db", db)[0])
    assert (job["id"], job["state"], job["claimed_by"]) == (expired["id"], "in_progress", "r1")

    _, err = _cli(capsys, "track", "cleanup", "--db", db)
    assert "requeued 1 expired claim(s)" in err, err
    (job,) = json.loads(_cli(capsys, "track", "query", "--json", "--db", db)[0])
    assert (job["state"], job["claimed_by"]) == ("queued", None)
