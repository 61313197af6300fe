"""A server bound beyond loopback: refused without a password (exit 2); with one, a client in
another network namespace reaches it over TLS with AUTH, and the password appears in no argv
(``ps``), log, output or file of the results. The namespaces and their veth pair are the
test's own (10.213.0.0/24), deleted at the end; the host's interfaces are never touched."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kvperf.core.secret import Secret
from kvperf.server.resp import Endpoint, RespClient, RespError
from tests.helpers import KVPERF, read_metrics, require_binary, run_kvperf, write_config
from tests.netns import veth_namespaces

pytestmark = pytest.mark.integration

PASSWORD = "kvp-Test-pw-7f3a9c"  # a test secret: it must never be seen
SERVER_IP, CLIENT_IP = "10.213.0.1", "10.213.0.2"
PORT = 7419
CONFIG = [{"duration": 2, "warmup": 0, "keyspacelen": 1000, "data_sizes": [16],
           "pipelines": [1], "clients": [4], "commands": ["SET", "GET"], "tls_mode": [True]}]


def _namespaces() -> contextlib.AbstractContextManager[tuple[str, str]]:
    return veth_namespaces("kvb", SERVER_IP, CLIENT_IP)


def _in(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, str(KVPERF), *args]


def _ps_args() -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _wait_listening(server: subprocess.Popen[str]) -> list[str]:
    assert server.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = server.stderr.readline()
        lines.append(line)
        if "press Ctrl-C" in line:
            return lines
        assert line or server.poll() is None, f"server side ended: {''.join(lines)}"
    raise AssertionError(f"server never announced itself: {''.join(lines)}")


def test_bind_beyond_loopback_without_password_is_refused(tmp_path: Path) -> None:
    env = {"KVPERF_SERVER_PASSWORD": ""}
    result = run_kvperf("run", "--mode", "server", "--bind", SERVER_IP, "--port", str(PORT),
                        cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "KVPERF_SERVER_PASSWORD" in result.stderr and SERVER_IP in result.stderr
    assert not (tmp_path / "results").exists() or not list(tmp_path.glob("results/*/server"))


def _watch_client(client: subprocess.Popen[str]) -> tuple[int, list[str]]:
    """Sample ``ps`` while the client runs: how often kvload was seen, and any line that
    shows the password."""
    seen_kvload, leaks = 0, []
    while client.poll() is None:
        lines = _ps_args()
        seen_kvload += any("kvload" in line and SERVER_IP in line for line in lines)
        leaks += [line for line in lines if PASSWORD in line]
        time.sleep(0.1)
    return seen_kvload, leaks


@pytest.mark.slow
@pytest.mark.usefixtures("no_strays")
def test_password_server_in_a_namespace_reached_over_tls(tmp_path: Path) -> None:
    require_binary("valkey-server")
    write_config(tmp_path, CONFIG)
    env = {**os.environ, "KVPERF_SERVER_PASSWORD": PASSWORD}
    with _namespaces() as (server_ns, client_ns):
        server = subprocess.Popen(
            _in(server_ns, "run", "--mode", "server", "--bind", SERVER_IP, "--port", str(PORT),
                "--config", "config.json", "--results-dir", "srv", "--label", "srv"),
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            announced = _wait_listening(server)
            assert any(f"{SERVER_IP}:{PORT}" in line for line in announced), announced
            args = ("run", "--mode", "client", "--target-ip", SERVER_IP, "--port", str(PORT),
                    "--tls", "--tls-ca", "srv/srv/tls/ca.pem", "--config", "config.json",
                    "--no-db")
            anonymous = subprocess.run(_in(client_ns, *args, "--results-dir", "anon"),
                                       cwd=tmp_path, capture_output=True, text=True,
                                       timeout=120, env={**os.environ,
                                                         "KVPERF_SERVER_PASSWORD": ""})
            assert anonymous.returncode == 2 and "NOAUTH" in anonymous.stderr, anonymous.stderr
            client = subprocess.Popen(_in(client_ns, *args, "--results-dir", "cli"),
                                      cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            seen_kvload, leaks = _watch_client(client)
            out, err = client.communicate(timeout=60)
        finally:
            server.send_signal(signal.SIGINT)
            server_out, server_err = server.communicate(timeout=30)
    assert client.returncode == 0, err
    assert seen_kvload >= 2 and not leaks, (seen_kvload, leaks)
    rows = read_metrics(tmp_path / "cli")
    assert [r["status"] for r in rows] == ["ok", "ok"] and all(r["tls"] for r in rows)
    assert rows[0]["server_version"] == "valkey-8.0.1" and rows[0]["rps"] > 0
    assert rows[1]["checks"]["hit_ratio"] == 1.0  # seeded over AUTH, then read back
    assert server.returncode == 0, server_err
    for text in (out, err, server_out, server_err, "".join(announced)):
        assert PASSWORD not in text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "logs.txt" for p in files) and len(files) > 5
    assert not [p for p in files if PASSWORD.encode() in p.read_bytes()]


@pytest.mark.usefixtures("no_strays")
def test_generated_password_is_shown_once_and_required(tmp_path: Path) -> None:
    """--generate-password: printed once to the terminal, required by the server, absent
    from the logs and results."""
    require_binary("valkey-server")
    write_config(tmp_path, [{"requests": 1000, "commands": ["SET"]}])
    server = subprocess.Popen([str(KVPERF), "run", "--mode", "server", "--generate-password",
                               "--port", str(PORT), "--config", "config.json",
                               "--label", "srv"], cwd=tmp_path,
                              env={**os.environ, "KVPERF_SERVER_PASSWORD": ""},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        announced = "".join(_wait_listening(server))
        shown = re.findall(r"server password \(shown only now\): (\S+)", announced)
        assert len(shown) == 1 and len(shown[0]) >= 32, announced
        endpoint = Endpoint("127.0.0.1", PORT)
        with pytest.raises(RespError, match="NOAUTH"), RespClient(endpoint) as client:
            client.call("PING")
        with RespClient(Endpoint("127.0.0.1", PORT, password=Secret(shown[0]))) as client:
            assert client.call("PING") == b"PONG"
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert shown[0] not in out + err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "logs.txt" for p in files)
    assert not [p for p in files if shown[0].encode() in p.read_bytes()]
