"""--mode server / --mode client, and server configs that are really applied."""

from __future__ import annotations

import os
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


@pytest.mark.usefixtures("no_strays")
def test_server_mode_then_client_mode(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 20000, "commands": ["SET", "GET"],
                                      "keyspacelen": 500}])
    server = subprocess.Popen(
        [str(KVPERF), "run", "--mode", "server", "--config", str(config), "--results-dir",
         str(tmp_path / "srv"), "--server-bin", require_binary("valkey-server"),
         "--tool", "valkey-benchmark"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = wait_for_address(server)
        with RespClient(endpoint) as client:
            assert client.call("PING") == b"PONG"
        done = run_kvperf("run", "--mode", "client", "--target-ip", endpoint.host, "--port",
                          str(endpoint.port), "--config", config, "--results-dir",
                          tmp_path / "cli", "--tool", "valkey-benchmark")
        assert done.returncode == 0, done.stderr
        rows = read_metrics(tmp_path / "cli")
        assert [r["status"] for r in rows] == ["ok", "ok"]
        assert rows[0]["server_version"] == "valkey-8.0.1"
        assert rows[1]["checks"]["hit_ratio"] == 1.0
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    assert server.returncode == 0


@pytest.mark.usefixtures("no_strays")
def test_ctrl_c_right_after_the_announcement_is_the_normal_way_out(tmp_path: Path) -> None:
    """Ctrl-C the moment the address is printed: exit 0 and the server stopped, not
    "interrupted" (exit 130). It failed in CI when the signal came between the announcement
    and kvperf marking the server as announced."""
    write_config(tmp_path, [{"requests": 1000, "commands": ["SET"]}])
    for attempt in range(3):
        server = subprocess.Popen(
            [str(KVPERF), "run", "--mode", "server", "--config", "config.json",
             "--results-dir", f"srv{attempt}"], cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_address(server)
        finally:
            server.send_signal(signal.SIGINT)
            _, err = server.communicate(timeout=30)
        assert server.returncode == 0, err
        assert "interrupted" not in err


@pytest.mark.usefixtures("no_strays")
def test_under_chrt_only_the_server_keeps_the_real_time_policy(tmp_path: Path) -> None:
    """`chrt -f 10 kvperf …` (docs/guide/sweeps.md, "Rate sweeps"): kvperf itself returns to
    SCHED_OTHER, the server it starts runs SCHED_FIFO at priority 10. A real-time kvperf
    reaping its children could spin in the kernel for minutes (core/proc.leave_realtime)."""
    write_config(tmp_path, [{"requests": 1000, "commands": ["SET"]}])
    kvperf = subprocess.Popen(
        [require_binary("chrt"), "-f", "10", str(KVPERF), "run", "--mode", "server",
         "--config", "config.json"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = wait_for_address(kvperf)  # chrt execs kvperf: one pid
        children = Path(f"/proc/{kvperf.pid}/task/{kvperf.pid}/children").read_text().split()
        servers = [int(c) for c in children
                   if "valkey-server" in Path(f"/proc/{c}/cmdline").read_text()]
        with RespClient(endpoint) as client:
            assert client.call("PING") == b"PONG"
        assert len(servers) == 1, children
        assert os.sched_getscheduler(kvperf.pid) == os.SCHED_OTHER
        assert os.sched_getscheduler(servers[0]) == os.SCHED_FIFO
        assert os.sched_getparam(servers[0]).sched_priority == 10
    finally:
        kvperf.send_signal(signal.SIGINT)
        _, err = kvperf.communicate(timeout=30)
    assert kvperf.returncode == 0, err


@pytest.mark.usefixtures("no_strays")
def test_custom_server_configs_and_config_sets_are_applied(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{
        "requests": 5000, "commands": ["SET"], "custom-server-configs": {"hz": 17},
        "config_sets": [{"maxmemory-samples": 7}, {"maxmemory-samples": 9}]}])
    done = run_kvperf("run", "--config", config, "--results-dir", tmp_path / "r",
                      "--server-bin", require_binary("valkey-server"),
                      "--tool", "valkey-benchmark")
    assert done.returncode == 0, done.stderr
    rows = read_metrics(tmp_path / "r")
    applied = [r["checks"]["server_config"] for r in rows]
    assert applied == [{"hz": "17", "maxmemory-samples": "7"},
                       {"hz": "17", "maxmemory-samples": "9"}]
    assert [r["config_set"] for r in rows] == [{"maxmemory-samples": "7"},
                                               {"maxmemory-samples": "9"}]


@pytest.mark.usefixtures("no_strays")
def test_a_server_that_cannot_start_fails_its_trials_with_the_reason(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 5000, "commands": ["SET"],
                                      "custom-server-configs": {"no-such-option": "1"}}])
    done = run_kvperf("run", "--config", config, "--results-dir", tmp_path / "r",
                      "--server-bin", require_binary("valkey-server"),
                      "--tool", "valkey-benchmark")
    assert done.returncode == 1
    (row,) = read_metrics(tmp_path / "r")
    assert row["status"] == "failed" and "no-such-option" in row["error"], row["error"]
