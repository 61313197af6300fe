"""Alerts on PostgreSQL (docs/guide/alerts.md): migration 4 creates the alert tables;
`regressions --store` records a step as one alert and re-running it adds nothing; the
lifecycle refuses moves it does not allow (exit 2, naming the state); the history page marks
the change point with its alert's state; `resolve --as fixed`
is refused with the numbers while the commits after the step are still slow, and accepted
once later commits are back; the report is written, and without gh on PATH, or with a
fake gh that is not logged in, `--open-issue` says it did not file.

The history is synthetic (seed-format rows of ten fake commits pushed with `kvperf db push`,
placed in time by their trials' timestamps): SET is 300k rps, 120k from commit 3 on, and
(pushed later) back to 300k from commit 7 on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from kvperf.store.migrations import migrate
from tests.helpers import run_main

pytestmark = [pytest.mark.integration]

SHAS = [f"{n:02d}" + "ab" * 19 for n in range(10)]


def _push(tmp: Path, db: str, commits: range) -> None:
    files = []
    for n in commits:
        rps = 120_000.0 if 3 <= n < 7 else 300_000.0
        rows = [{"timestamp": f"2025-06-01T{n:02d}:{t:02d}:00+00:00", "commit": SHAS[n],
                 "command": "SET", "data_size": 64, "pipeline": 16, "clients": 4,
                 "requests": 100000, "keyspacelen": 10000, "rps": rps * w,
                 "avg_latency_ms": 0.2, "p50_latency_ms": 0.2, "p99_latency_ms": 0.5,
                 "cluster_mode": False, "tls": False, "trial": t}
                for t, w in enumerate((0.995, 1.0, 1.005))]
        path = tmp / f"c{n}.json"
        path.write_text(json.dumps(rows))
        files.append(path)
    done = run_main("db", "push", *files, "--db", db)
    assert done.returncode == 0, done.stderr


def _kv(*args: str) -> tuple[int, str]:
    done = run_main(*args)
    return done.returncode, " ".join((done.stdout + done.stderr).split())


def test_alert_lifecycle_on_postgres(pg_url: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no gh here
    engine = create_engine(pg_url)
    assert migrate(engine) == [1, 2, 3, 4]
    assert {"alert_summaries", "alerts"} <= set(inspect(engine).get_table_names())
    engine.dispose()
    db = ["--db", pg_url]
    _push(tmp_path, pg_url, range(7))
    for _ in range(2):  # idempotent: the second detection adds nothing
        code, out = _kv("regressions", "--metric", "rps", "--store", *db)
        assert code == 0, out
    assert "alerts: 0 new summary(ies), 0 new alert(s)" in out, out
    listed = json.loads(run_main("alerts", "list", "--json", *db).stdout)
    assert len(listed) == 1 and len(listed[0]["alerts"]) == 1, listed
    (alert,) = listed
    ident = str(alert["id"])
    assert (alert["state"], alert["last_before_sha"], alert["first_after_sha"]) == \
        ("new", SHAS[2], SHAS[3])
    assert alert["alerts"][0]["direction"] == "regression"

    code, out = _kv("alerts", "resolve", ident, "--as", "fixed", *db)
    assert code == 2 and f"alert {ident} is not back within the noise" in out, out
    assert "-60.0% from 300000 before it (margin ±2%)" in out, out
    code, out = _kv("alerts", "ack", ident, "--owner", "ana", "--note", "looking", *db)
    assert code == 0 and f"alert {ident}: acknowledged, owner ana" in out, out
    code, out = _kv("alerts", "ack", ident, *db)
    assert code == 2 and f"alert {ident} is acknowledged: ack applies only to an alert " \
                          "that is new" in out, out
    code, out = _kv("alerts", "assign", ident, "bo", *db)
    assert code == 0 and "owner bo" in out, out
    code, out = _kv("report", "--history", "--metric", "rps", "-o", "h.html", "--json",
                    "h.json", *db)  # the history page marks the change point's alert
    assert code == 0 and f"<td>#{ident} acknowledged (bo)</td>" in Path("h.html").read_text()
    (marked,) = json.loads(Path("h.json").read_text())["histories"][0]["change_points"]
    assert marked["alert"] == f"#{ident} acknowledged (bo)", marked

    _push(tmp_path, pg_url, range(7, 10))  # the fix lands
    code, out = _kv("alerts", "resolve", ident, "--as", "fixed", "--note", "reverted", *db)
    assert code == 0 and f"alert {ident}: fixed" in out, out
    assert "fixed: rps back: the newest 3 commit(s) +0.0% from before the change" in out
    shown = json.loads(run_main("alerts", "show", ident, "--json", *db).stdout)
    assert shown["stamps"]["resolved_at"] and shown["stamps"]["acknowledged_at"], shown
    assert [(n["state"], n["by"], n["text"]) for n in shown["notes"]] == [
        ("acknowledged", "ana", "looking"), ("fixed", "bo", "reverted")]
    code, out = _kv("alerts", "resolve", ident, "--as", "invalid", *db)
    assert code == 2 and f"alert {ident} is fixed" in out, out
    assert [a["state"] for a in json.loads(run_main(
        "alerts", "list", "--state", "fixed", "--json", *db).stdout)] == ["fixed"]
    _check_reports(tmp_path, ident, db, monkeypatch)


def _check_reports(tmp_path: Path, ident: str, db: list[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The alert's report: not filed without gh, nor with a gh that is not logged in; the
    markdown and HTML reports hold the step with its CI."""
    code, out = _kv("alerts", "report", ident, "--open-issue", *db)
    assert code == 0 and "not filed: gh is not installed" in out, out
    calls = tmp_path / "gh-calls.txt"  # a fake gh (no GitHub here) that is not logged in
    fake = tmp_path / "bin" / "gh"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho "You are not logged into any '
                    'GitHub hosts." >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    code, out = _kv("alerts", "report", ident, "--open-issue", *db)
    assert code == 0 and "not filed: gh is not authenticated" in out, out
    assert calls.read_text() == "auth status\n"  # never asked to create the issue
    report = (tmp_path / f"alert-{ident}.md").read_text()
    assert report.startswith(f"# Regression in {SHAS[2][:12]}..{SHAS[3][:12]}: SET "), report
    # the step with its CI over the slow regime only (commits 3-6, not the fixed ones)
    assert "| rps | regression | -60.0% | [-60.0%, -60.0%] | 300000 → 120000 | n/a | 3 / 4 |" \
        in report, report
    code, out = _kv("alerts", "report", ident, "--html", *db)
    page = (tmp_path / f"alert-{ident}.html").read_text()
    assert code == 0 and page.startswith("<!doctype html>") and "<td>-60.0%</td>" in page, page
    assert f"<h1>Regression in {SHAS[2][:12]}..{SHAS[3][:12]}: SET" in page, page
