"""A killed server, an interrupted run: finished rows kept, nothing left running; a node
whose port another server holds is not taken for ready on that server's PONG."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from kvperf.core.errors import ServerError
from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import inspect
from kvperf.server.host import free_port
from kvperf.server.instance import ServerGroup
from kvperf.server.process import wait_until
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient
from tests.helpers import KVPERF, read_metrics, require_binary, server_pids, write_config

pytestmark = pytest.mark.integration


def _start(tmp_path: Path, objects: list[dict[str, object]]) -> subprocess.Popen[str]:
    config = write_config(tmp_path, objects)
    return subprocess.Popen(
        [str(KVPERF), "run", "--config", str(config), "--results-dir", str(tmp_path / "results"),
         "--server-bin", require_binary("valkey-server"), "--tool", "valkey-benchmark",
         "--label", "f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_server_pid(logs: Path, trial: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    pattern = re.compile(rf"trial {trial}: server pids (\d+)")
    while time.monotonic() < deadline:
        match = pattern.search(logs.read_text()) if logs.exists() else None
        if match:
            return int(match.group(1))
        time.sleep(0.05)
    raise AssertionError(f"trial {trial} never started a server")


@pytest.mark.usefixtures("no_strays")
def test_server_killed_mid_trial(tmp_path: Path) -> None:
    trial = {"requests": 40000, "commands": ["SET"], "clients": 5}
    long_trial = {"requests": 5_000_000, "commands": ["GET"], "keyspacelen": 100, "clients": 5}
    proc = _start(tmp_path, [trial, long_trial, trial])
    pid = _wait_for_server_pid(tmp_path / "results" / "f" / "logs.txt", 1)
    time.sleep(1.5)  # into the measure stage
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err
    rows = read_metrics(tmp_path / "results")
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert "killed by SIGKILL" in rows[1]["error"], rows[1]["error"]
    assert rows[0]["rps"] > 0 and rows[2]["rps"] > 0
    assert "Traceback" not in err


@pytest.mark.usefixtures("no_strays")
def test_sigint_mid_run_keeps_finished_rows(tmp_path: Path) -> None:
    quick = {"requests": 20000, "commands": ["SET"], "clients": 5}
    slow = {"requests": 5_000_000, "commands": ["SET"], "clients": 5}
    proc = _start(tmp_path, [quick, slow, quick])
    _wait_for_server_pid(tmp_path / "results" / "f" / "logs.txt", 1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "interrupted" in err
    rows = json.loads((tmp_path / "results" / "f" / "metrics.json").read_text())
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    assert not server_pids()


@pytest.mark.usefixtures("no_strays")
def test_sigterm_exits_130(tmp_path: Path) -> None:
    proc = _start(tmp_path, [{"requests": 5_000_000, "commands": ["SET"], "clients": 5}])
    _wait_for_server_pid(tmp_path / "results" / "f" / "logs.txt", 0)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err


@pytest.mark.usefixtures("no_strays")
def test_kvperf_killed_leaves_no_server(tmp_path: Path) -> None:
    proc = _start(tmp_path, [{"requests": 5_000_000, "commands": ["SET"], "clients": 5}])
    pid = _wait_for_server_pid(tmp_path / "results" / "f" / "logs.txt", 0)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "server outlived a SIGKILLed kvperf"
    # Its working directory survived the kill; the next kvperf to start a server removes it.
    stale = list(Path(tempfile.gettempdir()).glob(f"kvperf-server-{proc.pid}-*"))
    assert stale, "the killed run's server directory was expected to survive the kill"
    again = _start(tmp_path, [{"requests": 1000, "commands": ["SET"], "clients": 5}])
    again.communicate(timeout=60)
    assert again.returncode == 0
    assert not any(path.exists() for path in stale), stale


@pytest.mark.usefixtures("no_strays")
def test_a_node_is_ready_only_when_its_own_process_answers(tmp_path: Path) -> None:
    """Another server answering on a node's port before the node binds it (a chosen free
    port is not reserved; a valgrind node takes seconds to bind) is not the node being
    ready: the group waits for its own process, which here cannot bind and fails by name.
    Before the check, the other server's PONG made the group "ready" (a CI trial's load then
    hit a port nothing listened on)."""
    binary = inspect(Path(require_binary("valkey-server")), "--server-bin")
    port = free_port()
    other = subprocess.Popen([binary.path, "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = Endpoint("127.0.0.1", port)
        assert wait_until(lambda: _answers(endpoint), 20.0), "the other server never started"
        group = ServerGroup(binary, ServerSetup(False, False, None, 1, None, (), (), ()),
                            tmp_path, port=port)
        with pytest.raises(ServerError, match=r"during startup.*Address already in use"), group:
            pass
        assert other.poll() is None and _answers(endpoint)  # the other one untouched
    finally:
        other.terminate()
        other.wait(timeout=10)


def _answers(endpoint: Endpoint) -> bool:
    try:
        with RespClient(endpoint, timeout=1.0) as client:
            return client.call("PING") == b"PONG"
    except (ConnectionLost, OSError):
        return False
