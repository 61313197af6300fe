"""`kvperf report --history` marks the commits where the machine's environment changed, and
labels a change point that coincides with one (a SQLite history pushed through the store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.store.db import open_store, parse_url
from tests.helpers import run_main
from tests.unit.fleet.history_data import populate, sha

STEP_AT = 15
SERIES = {"SET": (lambda i: 200_000.0 * (0.9 if i >= STEP_AT else 1.0), lambda i: 1.0),
          "GET": (lambda i: 250_000.0, lambda i: 0.8)}


def _env(i: int) -> dict[str, str]:
    """The governor goes to powersave at the step; the kernel changes at commit 25, where
    nothing moves."""
    return {"host": "m1", "governor": "powersave" if i >= STEP_AT else "performance",
            "kernel": "Linux 6.2" if i >= 25 else "Linux 6.1", "commit_sha": sha(i)}


def test_history_marks_environment_changes(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "results" / "kvperf.db"
    db.parent.mkdir()
    populate(open_store(parse_url(f"sqlite:///{db}")), tmp_path / "pushed", 30, SERIES,
             env=_env)
    monkeypatch.chdir(tmp_path)
    done = run_main("report", "--history", "--metric", "rps", "--json", "h.json")
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "h.json").read_text())
    assert data["kvperf_history_report"] == 2
    by_series = {h["series"].split()[0]: h for h in data["histories"]}
    [change] = by_series["SET"]["change_points"]
    assert change["first_new"] == sha(STEP_AT)
    assert change["environment"] == ("environment changed: governor performance → "
                                     "powersave")
    for history in by_series.values():
        assert history["environment_changes"] == [
            {"first_new": sha(STEP_AT), "facts": {"governor": ["performance", "powersave"]}},
            {"first_new": sha(25), "facts": {"kernel": ["Linux 6.1", "Linux 6.2"]}}]
    page = (tmp_path / "history.html").read_text()
    assert "<h2>Environment changes</h2>" in page
    assert page.count("environment changed: governor performance → powersave") >= 2
    last = run_main("history", "--last", "30")
    assert last.returncode == 0, last.stderr
    assert (f"⚙ {sha(STEP_AT)[:10]}: environment changed: governor performance → powersave"
            in last.stdout), last.stdout
    assert f"⚙ {sha(25)[:10]}: environment changed: kernel Linux 6.1 → Linux 6.2" in last.stdout
    pair = run_main("history", "--sha", sha(STEP_AT - 1), sha(STEP_AT))
    assert pair.returncode == 0, pair.stderr
    assert "! environment: governor differs (performance vs powersave)" in pair.stderr
    same = run_main("history", "--sha", sha(1), sha(2))
    assert "environment: the sides' recorded facts are the same" in same.stdout
