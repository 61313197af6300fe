"""`kvperf regressions` over a real database (PostgreSQL 15 and SQLite): known steps are
found between the right commits, noise-only series give nothing, --since/--store/--json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from kvperf.analysis.regressions import find_all
from kvperf.analysis.stored import to_series
from kvperf.cli.main import main
from kvperf.store.db import open_store, parse_url
from kvperf.store.schema import change_points
from kvperf.store.series import histories
from tests.helpers import run_kvperf
from tests.pg import PASSWORD
from tests.unit.fleet.history_data import commit_time, populate, sha

pytestmark = pytest.mark.integration
STEP_AT = 20
SERIES = {
    # SET: rps −10 % and p99 +15 % from commit 20 on (a regression of both)
    "SET": (lambda i: 200_000.0 * (0.9 if i >= STEP_AT else 1.0),
            lambda i: 1.0 * (1.15 if i >= STEP_AT else 1.0)),
    # GET: noise only
    "GET": (lambda i: 250_000.0, lambda i: 0.8),
}


@pytest.fixture(params=["postgresql", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


def test_known_step_found_between_the_right_commits(db: str, tmp_path: Path) -> None:
    engine = open_store(parse_url(db))
    populate(engine, tmp_path / "results", 40, SERIES)
    found = histories(engine, ["rps", "p99_latency_ms"])
    assert {(h.params["command"], h.metric) for h in found} == {
        ("SET", "rps"), ("SET", "p99_latency_ms"), ("GET", "rps"), ("GET", "p99_latency_ms")}
    assert all(len(h.revisions) == len(h.means) == 40 for h in found)
    assert list(found[0].revisions) == [sha(i) for i in range(40)]  # commit order
    assert list(found[0].counts) == [3] * 40
    findings = find_all(to_series(h) for h in found)
    assert {(f.params["command"], f.metric, f.direction) for f in findings} == {
        ("SET", "rps", "regression"), ("SET", "p99_latency_ms", "regression")}
    for f in findings:
        assert (f.last_before.sha, f.first_after.sha) == (sha(STEP_AT - 1), sha(STEP_AT))
        assert f.first_after.at == commit_time(STEP_AT)
    rps = next(f for f in findings if f.metric == "rps")
    assert rps.magnitude == pytest.approx(-0.10, abs=0.01)


def test_cli_json_store_since_and_exit_code(pg_url: str, tmp_path: Path) -> None:
    engine = open_store(parse_url(pg_url))
    populate(engine, tmp_path / "results", 30, SERIES)
    done = run_kvperf("regressions", "--db", pg_url, "--json", "--store",
                      "--metric", "rps", "--metric", "p99_latency_ms")
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    listed = json.loads(done.stdout)
    assert [(x["params"]["command"], x["direction"]) for x in listed] == [
        ("SET", "regression"), ("SET", "regression")]
    assert {x["first_after"]["sha"] for x in listed} == {sha(STEP_AT)}
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(change_points)).scalar() == 2
    later = commit_time(STEP_AT + 1).isoformat()
    done = run_kvperf("regressions", "--db", pg_url, "--since", later, "--fail-on-regression")
    assert done.returncode == 0 and "no change points" in done.stdout
    done = run_kvperf("regressions", "--db", pg_url, "--fail-on-regression",
                      "--where", "command=SET")
    assert done.returncode == 1 and "regression" in done.stdout
    assert sha(STEP_AT - 1)[:12] + ".." + sha(STEP_AT)[:12] in done.stdout


def test_noise_only_history_has_no_change_points(tmp_path: Path) -> None:
    engine = open_store(parse_url(f"sqlite:///{tmp_path / 'h.db'}"))
    flat = {c: (lambda i: 100_000.0, lambda i: 1.0) for c in ("SET", "GET", "INCR", "LPUSH")}
    populate(engine, tmp_path / "results", 40, flat, noise=0.02)
    found = histories(engine, ["rps", "p50_latency_ms", "p99_latency_ms"])
    assert len(found) == 12
    assert find_all(to_series(h) for h in found) == []


def test_without_commit_times_trial_time_orders_the_history(tmp_path: Path) -> None:
    engine = open_store(parse_url(f"sqlite:///{tmp_path / 'h.db'}"))
    populate(engine, tmp_path / "results", 12, SERIES, record=False)
    (h,) = histories(engine, ["rps"], {"command": "SET"})
    assert list(h.times) == sorted(h.times)
    assert list(h.revisions) != [sha(i) for i in range(12)]  # measured shuffled


def test_bad_flags_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for flags, needle in ((["--since", "yesterday"], "--since"),
                          (["--metric", "rpz"], "did you mean 'rps'"),
                          (["--max-pvalue", "2"], "--max-pvalue")):
        assert main(["regressions", "--db", db, *flags]) == 2
        assert needle in capsys.readouterr().err


def test_regressions_says_why_nothing_was_checked(tmp_path: Path) -> None:
    """A fresh history, then one too short for a change point: each named, not just
    "0 histories checked"."""
    db = f"sqlite:///{tmp_path / 'fresh.db'}"
    done = run_kvperf("regressions", "--db", db)
    assert done.returncode == 0, done.stderr
    assert "0 series×metric histories checked" in done.stdout
    assert "no history in" in done.stdout and "kvperf run" in done.stdout, done.stdout
    populate(open_store(parse_url(db)), tmp_path / "results", 4, SERIES)
    done = run_kvperf("regressions", "--db", db, "--metric", "rps")
    assert done.returncode == 0, done.stderr
    assert "2 histories not checked: fewer than 6 revisions (the longest has 4)" in \
        done.stdout, done.stdout
