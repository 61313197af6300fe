"""`run --server-host ssh://root@10.213.1.1`: the servers run in a network namespace of their
own, reached over SSH (an sshd this test starts there, with its own host key and authorized
key), while kvperf and kvload run in a second namespace. A fresh server per trial, server
metrics in the rows, and after a SIGKILL of the client side no server is left in the server
namespace. Everything is started by pid and stopped by pid; the namespaces are deleted."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import KVPERF, read_metrics, require_binary, write_config
from tests.netns import veth_namespaces

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SERVER_IP, CLIENT_IP = "10.213.1.1", "10.213.1.2"
TAKEN = 30500  # held by a listener in the server namespace (the compare's range starts there)
RUN_PORTS = (30600, 30601)  # the run's --remote-ports: its first server finds its port taken
CONFIG = [{"duration": 1, "warmup": 0, "keyspacelen": 1000, "data_sizes": [16],
           "pipelines": [1], "clients": [4], "commands": ["SET", "GET"],
           "server_cpu_range": "0", "client_cpu_range": "1"}]


def _namespaces() -> contextlib.AbstractContextManager[tuple[str, str]]:
    return veth_namespaces("kvs", SERVER_IP, CLIENT_IP)


def _keys(directory: Path) -> Path:
    """Host key, client key, sshd_config and the client's ssh config; returns the latter."""
    directory.mkdir(mode=0o700)
    for name in ("host_key", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        str(directory / name)], check=True, timeout=30)
    (directory / "authorized_keys").write_text((directory / "id.pub").read_text())
    host_key = (directory / "host_key.pub").read_text().split()
    (directory / "known_hosts").write_text(f"{SERVER_IP} {host_key[0]} {host_key[1]}\n")
    (directory / "sshd_config").write_text(
        f"ListenAddress {SERVER_IP}\nPort 22\nHostKey {directory}/host_key\n"
        f"AuthorizedKeysFile {directory}/authorized_keys\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPidFile none\nSubsystem sftp internal-sftp\nLogLevel ERROR\n")
    config = directory / "config"
    config.write_text(f"Host {SERVER_IP}\n  IdentityFile {directory}/id\n  IdentitiesOnly yes\n"
                      f"  UserKnownHostsFile {directory}/known_hosts\n"
                      "  StrictHostKeyChecking yes\n")
    return config


@contextlib.contextmanager
def _sshd(namespace: str, directory: Path) -> Iterator[subprocess.Popen[bytes]]:
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    sshd = subprocess.Popen(["ip", "netns", "exec", namespace, require_binary("sshd"), "-D",
                             "-e", "-f", str(directory / "sshd_config")],
                            stderr=subprocess.PIPE)
    try:
        yield sshd
    finally:
        sshd.send_signal(signal.SIGTERM)
        sshd.communicate(timeout=30)


def _servers_in(namespace: str) -> list[int]:
    """Pids of valkey-server processes whose network namespace is ``namespace``."""
    target = os.stat(f"/run/netns/{namespace}").st_ino
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if ((entry / "comm").read_text().strip() == "valkey-server"
                    and os.stat(entry / "ns" / "net").st_ino == target):
                pids.append(int(entry.name))
    return pids


def _run_args(runs: int) -> list[str]:
    return [str(KVPERF), "run", "--server-host", f"ssh://root@{SERVER_IP}", "--ssh-config",
            "ssh/config", "--config", "config.json", "--runs", str(runs), "--no-db",
            "--server-bin", require_binary("valkey-server")]


@pytest.mark.usefixtures("no_strays")
def test_fresh_remote_server_per_trial_and_none_left_after_sigkill(tmp_path: Path) -> None:
    write_config(tmp_path, CONFIG)
    config = _keys(tmp_path / "ssh")
    assert config.is_file()
    remote_dirs = set(Path("/tmp").glob("kvperf-remote-*"))
    with (_namespaces() as (server_ns, client_ns), _sshd(server_ns, tmp_path / "ssh"),
          _listener(server_ns, TAKEN)):
        wrapper, state = _port_taking_wrapper(tmp_path / "remote")
        try:
            done = subprocess.run(["ip", "netns", "exec", client_ns, *_run_args(1),
                                   "--results-dir", "results", "--remote-server-bin",
                                   str(wrapper), "--remote-ports",
                                   "-".join(map(str, RUN_PORTS))],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=300)
        finally:
            _stop_holder(state)
        assert done.returncode == 0, done.stderr
        rows = read_metrics(tmp_path / "results")
        assert [r["status"] for r in rows] == ["ok", "ok"]
        for row in rows:
            assert row["server"]["calls"] > 0 and row["rps"] > 0, row["server"]
            assert row["server"]["cpu_seconds"] > 0, row["server"]
            assert row["env"]["pinning"] == {"server": "0", "client": "1"}  # read remotely
        logs = next(tmp_path.glob("results/*/logs.txt")).read_text()
        started = [line.split("server pids ")[1].split(" at ")[0]
                   for line in logs.splitlines() if "server pids" in line]
        assert len(set(started)) == 2, started  # a fresh server per trial
        # The first server (through --remote-server-bin's wrapper) was started on a port the
        # wrapper had just taken: it failed to listen there, and kvperf moved it to the next
        # port of the range; that port stays taken, so the second trial runs there too.
        taken = int((state / "first" / "port").read_text())
        (moved,) = set(RUN_PORTS) - {taken}
        assert _ports(logs) == [moved] * 2, logs
        first_trial = sorted((tmp_path / "results").glob("*/trials/*"))[0]
        attempts = (first_trial / "server-node0.log").read_text()
        assert f"Failed listening on port {taken}" in attempts, attempts
        assert attempts.count("kvperf-remote-pid ") == 2, attempts  # the retry's server
        assert _servers_in(server_ns) == []
        assert set(Path("/tmp").glob("kvperf-remote-*")) == remote_dirs
        _compare_across_hosts(tmp_path, client_ns)
        killed = subprocess.Popen(["ip", "netns", "exec", client_ns, *_run_args(20),
                                   "--results-dir", "killed"], cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not _servers_in(server_ns):
            assert killed.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        _kill_kvperf(killed.pid)
        killed.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _servers_in(server_ns) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _servers_in(server_ns) == [], "a server outlived the killed client side"
        while set(Path("/tmp").glob("kvperf-remote-*")) - remote_dirs:
            assert time.monotonic() < deadline, "the remote run directory was left behind"
            time.sleep(0.2)


def _compare_across_hosts(tmp_path: Path, client_ns: str) -> None:
    """A/B interleaving with both sides' servers on the remote host (each side's binary
    copied there), the verdict machinery unchanged. The duet runs both sides' servers at
    once: two free ports of three, so a draw of the taken one or of the partner's moves on."""
    server = require_binary("valkey-server")
    done = subprocess.run(
        ["ip", "netns", "exec", client_ns, str(KVPERF), "compare", "--server-bin", server,
         "--server-bin", server, "--server-host", f"ssh://root@{SERVER_IP}", "--ssh-config",
         "ssh/config", "--config", "config.json", "--runs", "2", "--no-db",
         "--results-dir", "ab", "--label", "ab", "--remote-ports", f"{TAKEN}-{TAKEN + 2}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    for side in ("A", "B"):
        rows = json.loads((tmp_path / "ab" / "ab" / side / "metrics.json").read_text())
        assert len(rows) == 4 and all(r["status"] == "ok" for r in rows), rows
        assert all(r["side"] == side and r["server"]["cpu_seconds"] > 0 for r in rows)
        logs = list((tmp_path / "ab" / "ab" / side).glob("trials/*/server-node0.log"))
        # the remote wrapper's pid line comes before anything of the server's; the login
        # shell may print first (pyenv's rehash, racing itself when a duet starts two at once)
        heads = [log.read_text().partition("kvperf-remote-pid ") for log in logs]
        assert len(logs) == 4 and all(sep and "Valkey" not in head
                                      for head, sep, _ in heads), heads
        for log in logs:  # the servers' banners: the last one is the server that ran
            tried = re.findall(r"Running mode=standalone, port=(\d+)\.", log.read_text())
            assert tried[-1] in (str(TAKEN + 1), str(TAKEN + 2)), (log, tried)


def _ports(logs: str) -> list[int]:
    """The port of every server a run's logs.txt says it started (``at IP:PORT``)."""
    return [int(line.split(f"at {SERVER_IP}:")[1].split()[0].rstrip(")"))
            for line in logs.splitlines() if "server pids" in line]


HOLDER = ("import socket, sys, time; s = socket.socket(); s.bind((sys.argv[1], "
          "int(sys.argv[2]))); s.listen(); print('ready', flush=True); time.sleep(900)")


def _port_taking_wrapper(directory: Path) -> tuple[Path, Path]:
    """A --remote-server-bin for the server host: the first time it runs, it takes the port
    its server was given (a listener on the server's --bind address and --port, its pid in
    ``state/holder.pid``) before exec'ing valkey-server, so that server fails to listen —
    whatever port kvperf drew, the first one it tries is in use. Later runs just exec."""
    state = directory / "state"
    state.mkdir(parents=True)
    wrapper = directory / "valkey-server"
    wrapper.write_text(f"""#!/bin/sh
state={state}
port=; bind=; prev=
for arg in "$@"; do
    [ "$prev" = --port ] && port=$arg
    [ "$prev" = --bind ] && bind=$arg
    prev=$arg
done
if mkdir "$state/first" 2>/dev/null; then
    python3 -c "{HOLDER}" "$bind" "$port" > "$state/holder.out" 2>&1 &
    echo $! > "$state/holder.pid"
    until grep -q ready "$state/holder.out"; do sleep 0.05; done
    echo "$port" > "$state/first/port"
fi
exec {require_binary("valkey-server")} "$@"
""")
    wrapper.chmod(0o755)
    return wrapper, state


def _stop_holder(state: Path) -> None:
    with contextlib.suppress(FileNotFoundError, ProcessLookupError, ValueError):
        os.kill(int((state / "holder.pid").read_text()), signal.SIGKILL)


@contextlib.contextmanager
def _listener(namespace: str, port: int) -> Iterator[None]:
    """A socket listening on the server's address and ``port`` (stopped by pid)."""
    holder = subprocess.Popen(["ip", "netns", "exec", namespace, "python3", "-c", HOLDER,
                               SERVER_IP, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield
    finally:
        holder.kill()
        holder.wait(timeout=30)


def _kill_kvperf(ip_pid: int) -> None:
    """SIGKILL kvperf itself (``ip netns exec`` execs it, so it is that pid)."""
    os.kill(ip_pid, signal.SIGKILL)
