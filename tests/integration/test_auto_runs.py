"""`compare --runs auto` against real servers: the fixture's slow commit (SET slowed ~15%)
stops its SET series early as a regression while GET (unchanged: proven so only once its
interval lies within ±2%, rounds later, or never) runs on alone; a build against itself
stops as "no change" or at --max-runs without a flag. 1 s duet rounds: every round is one
look's worth of evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.analysis.sequential import POCOCK
from tests.helpers import require_binary, run_kvperf, run_main, write_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

SET_DUET = [{"duration": 1, "warmup": 1, "commands": ["SET"], "pipelines": 16,
             "keyspacelen": 1000, "clients": 50, "server_cpu_range": "0",
             "client_cpu_range": "1"}]
SET_GET_DUET = [{**SET_DUET[0], "commands": ["SET", "GET"]}]


def _auto(directory: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads((directory / "auto-runs.json").read_text())
    return found


def _rows(directory: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads((directory / "metrics.json").read_text())
    return rows


def _runs(rows: list[dict[str, object]], command: str) -> list[object]:
    return sorted(r["run"] for r in rows if r["command"] == command)  # type: ignore[type-var]


@pytest.mark.usefixtures("no_strays")
@pytest.mark.alone
def test_a_slow_commit_stops_its_series_early_as_a_regression(
        valkey_repo: Path, build_cache: Path, tmp_path: Path) -> None:
    """As a user types it, from a scratch directory: the slowed SET series is decided a
    regression and stops, its later rounds not run, while GET runs on until it is decided
    (proven unchanged, flagged) or --max-runs: each series' rows end at its own stop
    (they differ unless both were decided at one look); every row records its series'
    stop, the report and compare-results say when each stopped."""
    write_config(tmp_path, SET_GET_DUET)
    done = run_kvperf("compare", "base", "set-slow", "--repo", valkey_repo, "--runs", "auto",
                      "--max-runs", "10", "--config", "config.json", "--schedule", "duet",
                      "--seed", "3", "--label", "auto", "--output", "report.md",
                      cwd=tmp_path, timeout=1800, env={"KVPERF_BUILD_CACHE": str(build_cache)})
    assert done.returncode == 0, done.stdout + done.stderr
    stops = {s["series"]: s for s in _auto(tmp_path / "results" / "auto")["series"]}  # type: ignore[attr-defined]
    auto = _auto(tmp_path / "results" / "auto")  # each look's level: POCOCK's, constant
    levels = {auto["levels"][str(k)] for k in range(3, 11)}  # type: ignore[index]
    assert auto["level_rule"] == "pocock" and levels == {POCOCK[10]}, auto
    put, got = stops["SET d=3 P=16 c=50"], stops["GET d=3 P=16 c=50"]
    assert put["verdict"] == "regression" and put["stop"] == "decided", put
    assert 3 <= put["rounds"] <= 10 and 3 <= got["rounds"] <= 10, stops
    a, b = _rows(tmp_path / "results" / "auto" / "A"), _rows(tmp_path / "results" / "auto" / "B")
    for rows in (a, b):  # each series ran exactly its own rounds (usually SET fewer)
        assert _runs(rows, "SET") == list(range(1, put["rounds"] + 1)), rows
        assert _runs(rows, "GET") == list(range(1, got["rounds"] + 1)), rows
        assert all(r["auto"] == {k: stops[f"{r['command']} d=3 P=16 c=50"][k]
                                 for k in ("rounds", "stop", "verdict")} for r in rows)
    line = f"SET d=3 P=16 c=50: decided: regression after {put['rounds']} rounds"
    assert line in done.stdout, done.stdout
    assert f"- {line}" in (tmp_path / "report.md").read_text()
    read = run_main("compare-results", tmp_path / "results" / "auto" / "A" / "metrics.json",
                    tmp_path / "results" / "auto" / "B" / "metrics.json")
    assert f"rounds · {line}" in read.stdout, read.stdout


@pytest.mark.usefixtures("no_strays")
@pytest.mark.alone
def test_a_server_against_itself_flags_nothing(tmp_path: Path) -> None:
    server = require_binary("valkey-server")
    config = write_config(tmp_path, SET_DUET)
    done = run_kvperf("compare", "--server-bin", server, "--server-bin", server, "--runs",
                      "auto", "--max-runs", "3", "--config", config, "--results-dir",
                      tmp_path, "--label", "aa", "--seed", "5", "--tool", "kvload")
    assert done.returncode == 0, done.stdout + done.stderr
    (series,) = _auto(tmp_path / "aa")["series"]  # type: ignore[misc]
    assert series["verdict"] not in ("regression", "improvement"), series
    assert (series["verdict"], series["stop"]) == ("no change", "decided") or \
        (series["rounds"], series["stop"]) == (3, "max-runs reached"), series
    assert "🔴" not in done.stdout and "🟢" not in done.stdout, done.stdout
    assert len(_rows(tmp_path / "aa" / "A")) == series["rounds"]


@pytest.mark.usefixtures("no_strays")
def test_noise_adds_rounds_until_decided(tmp_path: Path) -> None:
    """noise --runs auto: the same looks (short requests-bound trials, --max-runs 3)."""
    config = write_config(tmp_path, [{"requests": 30000, "commands": ["SET"], "pipelines": 16,
                                      "keyspacelen": 1000, "clients": 10}])
    done = run_kvperf("noise", "--runs", "auto", "--max-runs", "3", "--config", config,
                      "--results-dir", tmp_path, "--label", "n", "--tool", "kvload",
                      "--server-bin", require_binary("valkey-server"))
    assert done.returncode == 0, done.stdout + done.stderr
    (series,) = _auto(tmp_path / "n")["series"]  # type: ignore[misc]
    assert series["rounds"] == len(_rows(tmp_path / "n" / "B")) <= 3, series
    assert f"rounds · SET d=3 P=16 c=10: {series['text']}" in done.stdout, done.stdout
    assert f"· {series['rounds']} rounds" in done.stdout  # the title: rounds run


@pytest.mark.parametrize(("argv", "message"), [
    (["--runs", "several"], "argument --runs: expected a number of rounds or 'auto'"),
    (["--runs", "auto", "--max-runs", "2"], "--max-runs must be at least 3"),
    (["--runs", "5", "--max-runs", "9"], "--max-runs applies with --runs auto"),
    (["--runs", "auto", "--measure", "instructions"], "--runs auto does not apply with "
                                                      "--measure instructions"),
    (["--runs", "auto", "--trace", "x.trace"], "--runs auto and --max-runs do not apply with "
                                               "--trace"),
])
def test_bad_auto_runs_exit_2_naming_the_flag(tmp_path: Path, argv: list[str],
                                              message: str) -> None:
    server = require_binary("valkey-server")
    done = run_main("compare", "--server-bin", server, "--server-bin", server, *argv,
                    "--results-dir", tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())
