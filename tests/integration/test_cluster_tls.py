"""Cluster (3 primaries) and TLS against real valkey-server 8.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvperf.server.cluster import cluster_view, slot_ranges, view_ok, wait_cluster_ok
from kvperf.server.host import free_port
from kvperf.server.process import ManagedProcess, wait_until
from kvperf.server.resp import Endpoint, RespClient
from tests.helpers import read_metrics, require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration


def _run(tmp_path: Path, obj: dict[str, object],
         tool: str = "valkey-benchmark") -> list[dict[str, Any]]:
    """Run from tmp_path with relative paths and the default results dir (``results``)."""
    write_config(tmp_path, [obj])
    done = run_kvperf("run", "--config", "config.json",
                      "--server-bin", require_binary("valkey-server"),
                      "--tool", tool, "--label", "t", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_metrics(tmp_path / "results")


@pytest.mark.usefixtures("no_strays")
def test_cluster_mode_three_primaries(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 30000, "commands": ["SET", "LPUSH"], "cluster_mode": "yes",
                           "clients": 6, "pipelines": 4})
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["cluster_mode"] is True and r["rps"] > 0 for r in rows)
    _served_by_every_primary(rows)


def _served_by_every_primary(rows: list[dict[str, Any]],
                             spread: tuple[str, ...] | None = None) -> None:
    """Every row's calls are counted on the three primaries; those of ``spread`` (default:
    all) rows, whose keys are random, are served by each primary in a fair share."""
    for row in rows:
        per_node = row["server"]["calls_per_node"]
        assert len(per_node) == 3 and sum(per_node) == row["server"]["calls"], row["server"]
        if spread is not None and row["command"] not in spread:
            continue  # one key (RPUSH mylist): one node, by design
        assert row["server"]["calls"] >= row["requests"], row["server"]
        assert min(per_node) > 0.1 * sum(per_node), (row["command"], per_node)


def _tls_only(tmp_path: Path, nodes: int, trials: int) -> None:
    """Every node of every trial listened on TLS alone (the plaintext port disabled)."""
    logs = sorted((tmp_path / "results" / "t" / "trials").glob("*/server-node*.log"))
    assert len(logs) == nodes * trials, logs
    for log in logs:
        text = log.read_text()
        assert "Ready to accept connections tls" in text, log
        assert "Ready to accept connections tcp" not in text, log


@pytest.mark.usefixtures("no_strays")
def test_tls_mode(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 20000, "commands": ["SET", "GET"], "tls_mode": "yes",
                           "keyspacelen": 1000})
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["tls"] is True and r["rps"] > 0 for r in rows)
    assert rows[1]["checks"]["hit_ratio"] == 1.0
    _tls_only(tmp_path, nodes=1, trials=2)
    assert (tmp_path / "results" / "t" / "tls" / "server.pem").is_file()


@pytest.mark.usefixtures("no_strays")
def test_cluster_and_tls_together(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 20000, "commands": ["SET"], "tls_mode": "yes",
                           "cluster_mode": "yes", "clients": 6})
    assert rows[0]["status"] == "ok" and rows[0]["rps"] > 0
    _served_by_every_primary(rows)
    _tls_only(tmp_path, nodes=3, trials=1)


@pytest.mark.usefixtures("no_strays")
def test_seed_cluster_tls_config_with_kvload(tmp_path: Path) -> None:
    """The seed's cluster+TLS command set, reads and pops included (kvload routes plain keys)."""
    commands = ["SET", "GET", "RPUSH", "LPUSH", "LPOP", "SADD", "SPOP", "HSET"]
    rows = _run(tmp_path, {"requests": 20000, "keyspacelen": 1000, "commands": commands,
                           "cluster_mode": "yes", "tls_mode": "yes", "pipelines": 4,
                           "clients": 6}, tool="kvload")
    by_name = {r["command"]: r for r in rows}
    assert all(r["status"] == "ok" and r["rps"] > 0 for r in rows), rows
    assert by_name["GET"]["checks"]["hit_ratio"] == 1.0
    assert by_name["LPOP"]["checks"]["popped"] >= 20000
    assert by_name["SPOP"]["checks"]["popped"] >= 20000
    _served_by_every_primary(rows, spread=("SET", "GET"))
    _tls_only(tmp_path, nodes=3, trials=len(commands))


@pytest.mark.usefixtures("no_strays")
def test_cluster_forms_when_a_node_was_never_met(tmp_path: Path) -> None:
    """A lost MEET (valkey#1251 on a loaded machine) heals: the waiting step meets the node
    that misses its peers again; here node 2 is never met at all and still joins."""
    nodes = []
    try:
        for i in range(3):
            workdir = tmp_path / f"node{i}"
            workdir.mkdir()
            port = free_port(cluster=True)
            nodes.append((ManagedProcess(
                [require_binary("valkey-server"), "--port", str(port), "--cluster-enabled", "yes",
                 "--save", "", "--appendonly", "no"], stdout=workdir / "log", cwd=workdir),
                Endpoint("127.0.0.1", port)))
        endpoints = [e for _, e in nodes]
        for endpoint, (first, last) in zip(endpoints, slot_ranges(3), strict=True):
            assert wait_until(lambda e=endpoint: bool(cluster_view(e)), 20)
            with RespClient(endpoint) as client:
                client.call("CLUSTER", "ADDSLOTSRANGE", first, last)
        with RespClient(endpoints[0]) as client:
            client.call("CLUSTER", "MEET", "127.0.0.1", endpoints[1].port)  # node 2 left out
        wait_cluster_ok(endpoints, timeout=30)
        assert all(view_ok(cluster_view(e), 3) for e in endpoints)
    finally:
        for process, _ in nodes:
            process.stop()
