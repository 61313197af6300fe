"""Workload mixes on real valkey-server 8.0.1: every command of a mix is measured and its
executed calls (INFO commandstats) match what kvload sent, command by command."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from kvperf.server.resp import RespClient
from tests.helpers import (
    KVPERF,
    read_metrics,
    require_binary,
    run_kvperf,
    wait_for_address,
    write_config,
)

pytestmark = pytest.mark.integration

MIXES = {"MIX_50_50": {"set": 1, "get": 1}, "MIX_READ_HEAVY": {"set": 1, "get": 10},
         "MIX_WRITE_HEAVY": {"set": 10, "get": 1}, "MULTI_EXEC_5": {"multi": 1, "set": 5,
                                                                     "exec": 1},
         "SET:GET 1:3": {"set": 1, "get": 3},
         "SET key:__rand_int__ __data__ ; GET key:__rand_int__": {"set": 1, "get": 1}}


@pytest.mark.usefixtures("no_strays")
def test_mixes_measure_with_per_command_counts(tmp_path: Path) -> None:
    write_config(tmp_path, [{
        "duration": 1, "keyspacelen": 10000, "data_sizes": 16, "pipelines": [1, 8],
        "clients": 10, "commands": ["MIX_50_50", "MIX_READ_HEAVY", "MIX_WRITE_HEAVY",
                                    "MULTI_EXEC", MIX_KEYS_LINE], "ratio": "1:3"}])
    done = run_kvperf("run", "--config", "config.json", "--server-bin",
                      require_binary("valkey-server"), cwd=tmp_path)  # relative paths
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")
    assert {r["command"] for r in rows} == set(MIXES) and len(rows) == 2 * len(MIXES)
    for row in rows:
        assert row["status"] == "ok" and row["rps"] > 0, row
        commands, sent = row["server"]["commands"], row["client"]
        expected = MIXES[row["command"]]
        assert set(commands) == set(expected), (row["command"], commands)
        sequences = sum(c["calls"] for c in commands.values()) / sum(expected.values())
        for name, per_sequence in expected.items():
            calls = commands[name]["calls"]
            assert calls == commands[name]["expected"] or abs(
                calls / commands[name]["expected"] - 1) < 0.02, (row["command"], name, commands)
            assert abs(calls / (per_sequence * sequences) - 1) < 0.02, (name, commands)
            assert commands[name]["usec_per_call"] > 0
        assert row["checks"]["executed_ratio"] >= 0.98, row["checks"]
        assert sent.get("errors", {}).get("err", 0) == 0, sent
    seeded = [r for r in rows if r["command"] in ("MIX_50_50", "MIX_READ_HEAVY",
                                                  "MIX_WRITE_HEAVY", "SET:GET 1:3")]
    for row in seeded:  # their GETs read keys of their own from the seeded keyspace
        assert row["checks"]["hit_ratio"] >= 0.99, (row["command"], row["checks"])


MIX_KEYS_LINE = "SET key:__rand_int__ __data__ ; GET key:__rand_int__"


@pytest.mark.usefixtures("no_strays")
def test_sequences_are_refused_for_valkey_benchmark(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 1000, "commands": ["MIX_50_50"]}])
    done = run_kvperf("run", "--config", config, "--tool", "valkey-benchmark",
                      "--results-dir", tmp_path / "r")
    assert done.returncode == 2, done.stderr
    assert "MIX_50_50" in done.stderr and "--tool kvload" in done.stderr


@pytest.mark.usefixtures("no_strays")
def test_unknown_placeholder_is_exit_2_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 1000, "commands": ["SET __name__ x"]}])
    done = run_kvperf("run", "--config", config, "--results-dir", tmp_path / "r")
    assert done.returncode == 2 and "'__name__'" in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.usefixtures("no_strays")
def test_memtier_key_placeholder_writes_many_keys(tmp_path: Path) -> None:
    """``__key__`` becomes a key of the keyspace (memtier's habit), not one literal key;
    also drives --use-running-server against a server started by --mode server."""
    config = write_config(tmp_path, [{"requests": 5000, "keyspacelen": 1000000, "clients": 5,
                                      "commands": ["HSET __key__ field:1 __data__"]}])
    server = subprocess.Popen(
        [str(KVPERF), "run", "--mode", "server", "--config", str(config), "--results-dir",
         str(tmp_path / "srv"), "--server-bin", require_binary("valkey-server")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = wait_for_address(server)
        done = run_kvperf("run", "--use-running-server", "--port", str(endpoint.port),
                          "--config", config, "--results-dir", tmp_path / "r")
        assert done.returncode == 0, done.stderr
        (row,) = read_metrics(tmp_path / "r")
        assert row["command"] == "HSET key:__rand_int__ field:1 __data__"
        assert row["server"]["calls"] == 5000
        with RespClient(endpoint) as client:
            keys = client.call("DBSIZE")
            assert client.call("EXISTS", "__key__") == 0
        assert isinstance(keys, int) and keys > 4900, keys  # 5000 draws from 10^6 keys
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    assert server.returncode == 0
