"""KPI gates, built-in suites and sweeps end to end: real runs on the default server (the
valkey-server kvperf finds), 0.5 s trials, commands as docs/guide/run.md shows them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from kvperf.config.suites import SUITES
from tests.helpers import read_metrics, run_kvperf, write_config

pytestmark = pytest.mark.integration

CONFIG = [{"commands": ["SET", "GET"], "data_sizes": [64], "pipelines": [1, 8],
           "clients": [10], "keyspacelen": [1000], "duration": [1], "warmup": 0}]


def _gates(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    assert document["kvperf_gates"] == 1
    return document


@pytest.mark.usefixtures("no_strays")
def test_each_gate_form_passes_and_fails_with_its_exit_code(tmp_path: Path) -> None:
    write_config(tmp_path, CONFIG)
    passing = ["SET.rps>=100", "GET P=8.p99_latency_ms<=1000"]
    base = run_kvperf("run", "--config", "config.json", "--label", "base",
                      *(a for g in passing for a in ("--gate", g)), cwd=tmp_path)
    assert base.returncode == 0, base.stdout + base.stderr
    document = _gates(tmp_path / "results" / "base" / "gates.json")
    assert document["passed"] and [(g["gate"], g["series"]) for g in document["gates"]] == [
        ("SET.rps>=100", "SET d=64 P=1 c=10"), ("SET.rps>=100", "SET d=64 P=8 c=10"),
        ("GET P=8.p99_latency_ms<=1000", "GET d=64 P=8 c=10")]
    assert all(g["observed"] > 0 for g in document["gates"])
    assert "Gates: 3 passed, 0 failed" in base.stdout and "Sweep of P" in base.stdout

    relative = run_kvperf("run", "--config", "config.json", "--label", "new",
                          "--baseline", "results/base", "--gate", "SET.rps>=0.2*baseline",
                          cwd=tmp_path)
    assert relative.returncode == 0, relative.stdout + relative.stderr
    gates = _gates(tmp_path / "results" / "new" / "gates.json")["gates"]
    assert all(g["passed"] and g["bound"] > 0 for g in gates) and len(gates) == 2

    failing = ["SET P=1.rps>=1e12", "GET P=1.p99_latency_ms<=0.000001",
               "SET P=8.rps>=50*baseline", "GET P=1.rps>=1"]
    failed = run_kvperf("run", "--config", "config.json", "--label", "fail",
                        "--baseline", "results/base/metrics.json",
                        *(a for g in failing for a in ("--gate", g)), cwd=tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    verdicts = {g["gate"]: g["passed"] for g in
                _gates(tmp_path / "results" / "fail" / "gates.json")["gates"]}
    assert verdicts == {failing[0]: False, failing[1]: False, failing[2]: False,
                        failing[3]: True}
    assert "3 gate(s) failed" in failed.stderr
    assert all(r["status"] == "ok" for r in read_metrics_of(tmp_path / "results" / "fail"))


def read_metrics_of(directory: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((directory / "metrics.json").read_text())
    return rows


@pytest.mark.parametrize(("gate", "extra", "named"), [
    ("SET.rps>>1", (), "not a number"),
    ("SET.rpz>=1", (), "known metric"),
    ("HSET.rps>=1", (), "no series of this run is 'HSET'"),
    ("SET.rps>=0.9*baseline", (), "give --baseline PATH"),
    ("SET.rps>=0.9*baseline", ("--baseline", "nowhere"), "no such results directory"),
])
def test_a_bad_gate_exits_2_before_any_server(tmp_path: Path, gate: str,
                                              extra: tuple[str, ...], named: str) -> None:
    write_config(tmp_path, CONFIG)
    done = run_kvperf("run", "--config", "config.json", "--gate", gate, *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in done.stderr, done.stderr
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob(
        "metrics.json"))


def test_a_gate_in_the_config_is_checked_like_the_command_line(tmp_path: Path) -> None:
    write_config(tmp_path, [{**CONFIG[0], "gates": ["SET.rps>=1", "SET.p99.latency<=1"]}])
    done = run_kvperf("run", "--config", "config.json", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2 and "object 0: 'gates'" in done.stderr, done.stderr


def test_suites_are_listed_and_flags_checked(tmp_path: Path) -> None:
    listed = run_kvperf("suites", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for name in SUITES:
        assert name in listed.stdout
    both = run_kvperf("run", "--suite", "quick", "--config", "c.json", cwd=tmp_path)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    unknown = run_kvperf("run", "--suite", "latency,nope", "--dry-run", cwd=tmp_path)
    assert unknown.returncode == 2 and "--suite 'nope': no such suite" in unknown.stderr
    plan = run_kvperf("run", "--suite", "latency,pipeline", "--quick", "--dry-run",
                      cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "Plan: 14 trials" in plan.stdout  # latency 2 x 2, pipeline 2 x 5


@pytest.mark.slow
@pytest.mark.usefixtures("no_strays")
def test_the_comprehensive_suite_runs_quick_end_to_end(tmp_path: Path) -> None:
    start = time.monotonic()
    done = run_kvperf("run", "--suite", "comprehensive", "--quick", "--label", "all",
                      cwd=tmp_path, timeout=600)
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert elapsed < 300, f"comprehensive --quick took {elapsed:.0f} s"
    rows = read_metrics(tmp_path / "results")
    commands = {r["command"] for r in rows}
    assert commands == {"SET", "GET", "MULTI_EXEC_5", "INCR", "MIX_READ_HEAVY",
                        "MIX_WRITE_HEAVY", "MIX_50_50"}
    assert len(rows) == 18 + 2 + 3 + 4
    assert all(r["status"] == "ok" and r["rps"] > 0 for r in rows), [
        (r["command"], r["error"]) for r in rows if r["status"] != "ok"]
    assert {r["data_size"] for r in rows} == {100, 1000, 10000}
    assert {r["pipeline"] for r in rows} == {1, 10, 100}
    assert {r["clients"] for r in rows} == {1, 10, 50}
    for key in ("Sweep of d (data_size)", "Sweep of P (pipeline)", "Sweep of c (clients)"):
        assert key in done.stdout
    report = run_kvperf("report", "results/all", "-o", "report.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Sweeps</h2>" in page and "requests/s against P" in page
