"""The store against a real PostgreSQL 15 and real valkey-server runs: kill -9 mid-run,
PostgreSQL stopped mid-run, idempotent pushes, no password in any output."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select

from kvperf.store import schema
from kvperf.store.records import row_hash
from tests.helpers import KVPERF, require_binary, run_kvperf, write_config
from tests.pg import PASSWORD, running_cluster

pytestmark = pytest.mark.integration

FAST = [{"requests": 20000, "keyspacelen": 1000, "data_sizes": [16], "pipelines": [1],
         "clients": [10], "commands": ["SET", "GET"]}]


def _counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        counts = {t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                  for t in (schema.runs, schema.trials, schema.metrics, schema.histograms)}
    engine.dispose()
    return counts


def _stored_hashes(url: str) -> set[str]:
    engine = create_engine(url)
    with engine.connect() as conn:
        hashes = set(conn.execute(select(schema.trials.c.row_hash)).scalars())
    engine.dispose()
    return hashes


def _metrics_rows(results: Path) -> list[dict[str, Any]]:
    files = list(results.glob("*/metrics.json"))
    if not files:
        return []
    try:
        rows: list[dict[str, Any]] = json.loads(files[0].read_text())
    except json.JSONDecodeError:  # cannot happen (atomic replace), but never crash the poll
        return []
    return rows


def _start_run(tmp_path: Path, url: str, runs: int, *extra: str) -> subprocess.Popen[str]:
    require_binary("valkey-server")
    config = write_config(tmp_path, FAST)
    return subprocess.Popen([str(KVPERF), "run", "--config", str(config), "--runs", str(runs),
                             "--results-dir", str(tmp_path / "results"), "--commit", "c0ffee",
                             "--db", url, *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_rows(results: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while len(_metrics_rows(results)) < count:
        assert proc.poll() is None, f"run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.05)


@pytest.mark.usefixtures("no_strays")  # no server outlives kvperf's kill -9
def test_kill_9_mid_run_loses_no_finished_trial(tmp_path: Path, pg_url: str) -> None:
    proc = _start_run(tmp_path, pg_url.replace("postgresql+psycopg", "postgresql"), runs=20)
    _wait_rows(tmp_path / "results", 3, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    rows = _metrics_rows(tmp_path / "results")
    assert 3 <= len(rows) < 40, "the run should have been killed mid-way"
    stored = _stored_hashes(pg_url)
    assert {row_hash(r) for r in rows} <= stored
    assert len(stored) - len(rows) <= 1  # at most the trial between DB commit and file write
    time.sleep(1)  # servers die with their parent (PDEATHSIG)


def test_postgres_stopped_mid_run_then_push_fills_it(tmp_path: Path) -> None:
    with running_cluster() as cluster:
        url = cluster.create_database("stopped")
        proc = _start_run(tmp_path, url, runs=6)
        _wait_rows(tmp_path / "results", 2, proc)
        cluster.stop()
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 1, (out, err)
        rows = _metrics_rows(tmp_path / "results")
        assert len(rows) == 12 and all(r["status"] == "ok" for r in rows)
        message = " ".join(err.split())
        assert PASSWORD not in out + err
        assert f"kvperf:***@127.0.0.1:{cluster.port}/stopped" in message
        assert "not written to the database" in message and "kvperf db push" in message
        cluster.start()
        before = _counts(url)["trials"]
        assert 2 <= before < 12
        push = run_kvperf("db", "push", *tmp_path.glob("results/*/metrics.json"), "--db", url)
        assert push.returncode == 0, push.stderr
        assert f"{12 - before} row(s) added, {before} already present" in push.stderr
        assert PASSWORD not in push.stdout + push.stderr
        assert _stored_hashes(url) == {row_hash(r) for r in rows}


def _process_tree(pid: int) -> list[int]:
    """The pid and every descendant's (the postmaster's backends and workers)."""
    pids = [pid]
    for parent in pids:
        for task in Path(f"/proc/{parent}/task").glob("*"):
            children = (task / "children").read_text().split()
            pids += [int(c) for c in children if int(c) not in pids]
    return pids


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def test_hung_postgres_times_out_and_keeps_every_result(tmp_path: Path) -> None:
    """SIGSTOP on the postmaster and its backends: the kernel still accepts and acknowledges,
    nobody answers. The live write gives up after --db-timeout, the run finishes."""
    with running_cluster() as cluster:
        url = cluster.create_database("hung")
        proc = _start_run(tmp_path, url, 6, "--db-timeout", "2")
        _wait_rows(tmp_path / "results", 2, proc)
        assert cluster.process is not None
        stopped = _process_tree(cluster.process.pid)
        assert len(stopped) > 3, "postgres should have backends and workers"
        _signal_all(stopped, signal.SIGSTOP)
        hung_at = time.monotonic()
        try:
            out, err = proc.communicate(timeout=60)
            elapsed = time.monotonic() - hung_at
        finally:
            _signal_all(stopped, signal.SIGCONT)
        assert proc.returncode == 1, (out, err)
        rows = _metrics_rows(tmp_path / "results")
        assert len(rows) == 12 and all(r["status"] == "ok" for r in rows)
        # the rest of the run: the 2 s bound once, then ~10 short trials not sent to the DB
        assert elapsed < 2 + 25, elapsed
        message = " ".join(err.split())
        assert "did not answer within 2 s" in message, message
        assert "not written to the database" in message and PASSWORD not in out + err
        push = run_kvperf("db", "push", *tmp_path.glob("results/*/metrics.json"), "--db", url)
        assert push.returncode == 0, push.stderr
        assert _stored_hashes(url) == {row_hash(r) for r in rows}


def test_push_twice_changes_nothing(tmp_path: Path, pg_url: str) -> None:
    require_binary("valkey-server")
    config = write_config(tmp_path, FAST)
    results = tmp_path / "results"
    run = run_kvperf("run", "--config", config, "--results-dir", results, "--no-db")
    assert run.returncode == 0, run.stderr
    metrics = next(results.glob("*/metrics.json"))
    first = run_kvperf("db", "push", metrics, "--db", pg_url)
    assert first.returncode == 0, first.stderr
    assert "2 row(s) added, 0 already present" in first.stderr
    counts = _counts(pg_url)
    assert counts == {"runs": 1, "trials": 2, "metrics": counts["metrics"], "histograms": 4}
    assert counts["metrics"] >= 2 * 10
    second = run_kvperf("db", "push", metrics, "--db", pg_url)
    assert "0 row(s) added, 2 already present" in second.stderr
    assert _counts(pg_url) == counts


def test_unreachable_database_is_named_without_password(tmp_path: Path) -> None:
    config = write_config(tmp_path, FAST)
    url = f"postgresql://kvperf:{PASSWORD}@127.0.0.1:1/nowhere"
    result = run_kvperf("run", "--config", config, "--results-dir", tmp_path, "--db", url)
    assert result.returncode == 1
    assert PASSWORD not in result.stdout + result.stderr
    assert "postgresql+psycopg://kvperf:***@127.0.0.1:1/nowhere" in result.stderr
    assert not list(tmp_path.glob("*/metrics.json")), "no trial may run without its database"
