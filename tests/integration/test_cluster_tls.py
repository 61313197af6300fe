"""Cluster (3 primaries) and TLS against real valkey-server 8.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import read_metrics, require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration


def _run(tmp_path: Path, obj: dict[str, object],
         tool: str = "valkey-benchmark") -> list[dict[str, Any]]:
    config = write_config(tmp_path, [obj])
    done = run_kvperf("run", "--config", config, "--results-dir", tmp_path / "results",
                      "--server-bin", require_binary("valkey-server"),
                      "--tool", tool, "--label", "t")
    assert done.returncode == 0, done.stdout + done.stderr
    return read_metrics(tmp_path / "results")


@pytest.mark.usefixtures("no_strays")
def test_cluster_mode_three_primaries(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 30000, "commands": ["SET", "LPUSH"], "cluster_mode": "yes",
                           "clients": 6, "pipelines": 4})
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["cluster_mode"] is True and r["rps"] > 0 for r in rows)
    # All three primaries served SETs: the load really went through the cluster.
    logs = sorted((tmp_path / "results" / "t" / "trials").glob("0000-*/server-node*.log"))
    assert len(logs) == 3
    assert rows[0]["server"]["calls"] >= 30000


@pytest.mark.usefixtures("no_strays")
def test_tls_mode(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 20000, "commands": ["SET", "GET"], "tls_mode": "yes",
                           "keyspacelen": 1000})
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["tls"] is True and r["rps"] > 0 for r in rows)
    assert rows[1]["checks"]["hit_ratio"] == 1.0
    for log in (tmp_path / "results" / "t" / "trials").glob("*/server-node0.log"):
        text = log.read_text()
        # The plaintext port is disabled; the only listener is TLS.
        assert "Ready to accept connections tls" in text
        assert "Ready to accept connections tcp" not in text


@pytest.mark.usefixtures("no_strays")
def test_cluster_and_tls_together(tmp_path: Path) -> None:
    rows = _run(tmp_path, {"requests": 20000, "commands": ["SET"], "tls_mode": "yes",
                           "cluster_mode": "yes", "clients": 6})
    assert rows[0]["status"] == "ok" and rows[0]["rps"] > 0


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
