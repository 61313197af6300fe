"""`kvperf report --history` over a real SQLite history database (40 commits pushed through
the store, SET stepping down 10% at commit 20, GET flat), opened in headless Chromium with
the same probes as the run and A/B reports: the page renders offline, shows a chart per
series and metric and marks the one change point between the right commits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from kvperf.store.db import open_store, parse_url
from tests.helpers import run_kvperf
from tests.integration.test_report_browser import browser, check_page, open_report
from tests.unit.fleet.history_data import populate, sha

pytestmark = [pytest.mark.integration, pytest.mark.slow]
__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

STEP_AT = 20
SERIES = {"SET": (lambda i: 200_000.0 * (0.9 if i >= STEP_AT else 1.0), lambda i: 1.0),
          "GET": (lambda i: 250_000.0, lambda i: 0.8)}


def test_history_report_marks_the_change_point(tmp_path: Path, browser: Browser) -> None:
    db = tmp_path / "results" / "kvperf.db"
    db.parent.mkdir()
    populate(open_store(parse_url(f"sqlite:///{db}")), tmp_path / "pushed", 40, SERIES)
    done = run_kvperf("report", "--history", "--metric", "rps", "--json", "history.json",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 series×metric, 1 change point(s)" in done.stderr, done.stderr
    info = open_report(browser, tmp_path / "history.html")  # the default file name
    check_page(info)
    assert info["h2"] == ["Change points", "Histories"] and info["svgs"] == 2
    data = json.loads((tmp_path / "history.json").read_text())
    assert data["kvperf_history_report"] == 2
    by_series = {h["series"].split()[0]: h for h in data["histories"]}
    assert len(by_series["SET"]["points"]) == 40 and by_series["GET"]["change_points"] == []
    [change] = by_series["SET"]["change_points"]
    assert change["direction"] == "regression" and change["first_new"] == sha(STEP_AT)
    assert change["magnitude"] == pytest.approx(-0.10, abs=0.01)
    assert change["commits"] == f"{sha(STEP_AT - 1)[:12]}..{sha(STEP_AT)[:12]}"


def test_history_report_bad_input(tmp_path: Path) -> None:
    empty = run_kvperf("report", "--history", cwd=tmp_path)
    assert empty.returncode == 2 and "no history in" in empty.stderr, empty.stderr
    both = run_kvperf("report", "--history", "results/x", cwd=tmp_path)
    assert both.returncode == 2 and "give no PATH" in both.stderr
    stray = run_kvperf("report", "results/x", "--metric", "rps", cwd=tmp_path)
    assert stray.returncode == 2 and "only with --history" in stray.stderr
