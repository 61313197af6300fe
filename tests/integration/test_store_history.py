"""Store end to end on SQLite (the default) and PostgreSQL: default file, seed-format pushes,
and `kvperf history` output asserted against known pushed data."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select

from kvperf.store import schema
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration

SHA_A, SHA_B = "a" * 40, "b" * 40
RPS = {SHA_A: {"SET": [100_000.0, 110_000.0, 90_000.0], "GET": [200_000.0, 200_000.0]},
       SHA_B: {"SET": [120_000.0, 120_000.0, 120_000.0], "GET": [150_000.0, 250_000.0]}}


def seed_row(commit: str, command: str, rps: float, n: int) -> dict[str, Any]:
    """A row in the seed system's format (no run, trial_id, status, tool, env)."""
    return {"timestamp": f"2025-05-{28 if commit == SHA_A else 29}T01:29:{n:02d}+02:00",
            "commit": commit, "command": command, "data_size": 16, "pipeline": 10,
            "clients": 50, "requests": 100000, "rps": rps, "avg_latency_ms": 0.8,
            "min_latency_ms": 0.28, "p50_latency_ms": 0.775, "p95_latency_ms": 1.159,
            "p99_latency_ms": 1000 / rps, "max_latency_ms": 2.463, "cluster_mode": False,
            "tls": False}


def write_seed_results(base: Path) -> list[Path]:
    paths = []
    for commit, by_command in RPS.items():
        rows = [seed_row(commit, command, rps, i) for command, values in by_command.items()
                for i, rps in enumerate(values)]
        path = base / commit / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(rows))
        paths.append(path)
    return paths


def trial_count(url: str) -> int:
    engine = create_engine(url)
    with engine.connect() as conn:
        count = int(conn.execute(select(func.count()).select_from(schema.trials)).scalar_one())
    engine.dispose()
    return count


def test_default_sqlite_file_holds_every_trial(tmp_path: Path) -> None:
    require_binary("valkey-server")
    config = write_config(tmp_path, [{"requests": 20000, "keyspacelen": 1000,
                                      "data_sizes": [16], "clients": [10],
                                      "commands": ["SET", "GET"]}])
    result = run_kvperf("run", "--config", config, "--results-dir", tmp_path / "r",
                        "--commit", "abc123")
    assert result.returncode == 0, result.stderr
    db = tmp_path / "r" / "kvperf.db"
    assert db.is_file()
    assert trial_count(f"sqlite:///{db}") == 2
    push = run_kvperf("db", "push", tmp_path / "r" / "abc123" / "metrics.json",
                      "--results-dir", tmp_path / "r")
    assert "0 row(s) added, 2 already present" in push.stderr, push.stderr
    history = run_kvperf("history", "--results-dir", tmp_path / "r", "--json",
                         "--include-disturbed")  # what is stored, busy machine or not
    cells = json.loads(history.stdout)
    assert {c["revision"] for c in cells} == {"abc123"} and len(cells) == 2


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_seed_files_push_idempotently(tmp_path: Path, backend: str,
                                      request: pytest.FixtureRequest) -> None:
    url = (f"sqlite:///{tmp_path / 'h.db'}" if backend == "sqlite"
           else request.getfixturevalue("pg_url"))
    files = write_seed_results(tmp_path / "results")
    first = run_kvperf("db", "push", *files, "--db", url)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("5 row(s) added, 0 already present") == 2
    again = run_kvperf("db", "push", *files, "--db", url)
    assert again.stderr.count("0 row(s) added, 5 already present") == 2
    assert trial_count(url) == 10


def history_db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    result = run_kvperf("db", "push", *write_seed_results(tmp_path / "results"), "--db", url)
    assert result.returncode == 0, result.stderr
    return url


def test_history_cells_match_pushed_values(tmp_path: Path) -> None:
    url = history_db(tmp_path)
    result = run_kvperf("history", "--db", url, "--json", "--metric", "rps")
    assert result.returncode == 0, result.stderr
    cells = {(c["revision"], c["n"], round(c["mean"], 3), round(c["cv"] or 0, 6))
             for c in json.loads(result.stdout)}
    expected = {(sha, len(v), round(statistics.fmean(v), 3),
                 round(statistics.stdev(v) / statistics.fmean(v), 6))
                for sha, by_command in RPS.items() for v in by_command.values()}
    assert cells == expected


def test_history_table_and_sha_change(tmp_path: Path) -> None:
    url = history_db(tmp_path)
    table = run_kvperf("history", "--db", url, "--where", "command=set")
    assert table.returncode == 0, table.stderr
    assert "GET" not in table.stdout and "SET d=16 P=10 c=50" in table.stdout
    assert re.search(r"aaaaaaaaaa .*│ 3 │\s+100,000 │\s+10\.0% │", table.stdout), table.stdout
    assert re.search(r"bbbbbbbbbb .*│ 3 │\s+120,000 │\s+0\.0% │", table.stdout), table.stdout
    change = run_kvperf("history", "--db", url, "--sha", "aaaa", "bbbbbbbb",
                        "--where", "command=GET", "--metric", "rps")
    assert change.returncode == 0, change.stderr
    assert re.search(r"rps .*200,000 .*200,000 .*\+0\.0%", change.stdout), change.stdout
    setchange = run_kvperf("history", "--db", url, "--sha", "aaaa", "bbbb",
                           "--where", "command=SET", "--metric", "rps",
                           "--metric", "p99_latency_ms")
    assert re.search(r"rps .*100,000 .*120,000 .*\+20\.0%", setchange.stdout), setchange.stdout
    assert "p99_latency_ms" in setchange.stdout


def test_history_bad_input_exits_2(tmp_path: Path) -> None:
    url = history_db(tmp_path)
    typo = run_kvperf("history", "--db", url, "--where", "pipline=10")
    assert typo.returncode == 2 and "did you mean 'pipeline'" in typo.stderr
    value = run_kvperf("history", "--db", url, "--where", "clients=many")
    assert value.returncode == 2 and "expected an integer" in value.stderr
    metric = run_kvperf("history", "--db", url, "--metric", "rsp")
    assert metric.returncode == 2 and "did you mean 'rps'" in metric.stderr
    sha = run_kvperf("history", "--db", url, "--sha", "cccc", "aaaa")
    assert sha.returncode == 2 and "--sha cccc" in sha.stderr
