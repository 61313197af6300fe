"""Shared test helpers: run the real kvperf CLI, write configs, find strays."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kvperf.server.resp import Endpoint

ROOT = Path(__file__).resolve().parents[1]
KVPERF = Path(sys.prefix) / "bin" / "kvperf"
SERVER_NAMES = ("valkey-server", "redis-server", "callgrind-amd64")  # comm of valgrind'd servers


def require_binary(name: str) -> str:
    """Absolute path of a binary the tests need; a missing one fails (never skips)."""
    found = shutil.which(name) or (str(Path(sys.prefix) / "bin" / name)
                                   if (Path(sys.prefix) / "bin" / name).is_file() else None)
    assert found, f"{name} is not installed: run scripts/test, which installs it"
    return found


def write_config(directory: Path, objects: list[dict[str, Any]] | Any,
                 name: str = "config.json") -> Path:
    path = directory / name
    path.write_text(objects if isinstance(objects, str) else json.dumps(objects))
    return path


def run_kvperf(*args: str | Path, cwd: Path | None = None, timeout: float = 300,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KVPERF), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def run_main(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """kvperf's main() in this process, for commands that only read files and print (no
    interpreter start per call): what the console script runs, with its exit code, stdout
    and stderr as run_kvperf returns them."""
    from kvperf.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    argv = [str(a) for a in args]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return subprocess.CompletedProcess(["kvperf", *argv], code, out.getvalue(), err.getvalue())


def server_pids() -> set[int]:
    """Pids of servers kvperf started for this test session: they run in a kvperf-server-*
    temp dir under the session's own temp root (tests/conftest.py), so servers of another
    test run on the same machine are not counted. The working directory tells, not the
    command line: valkey-server rewrites its process title."""
    mark = f"{tempfile.gettempdir()}/kvperf-server-"
    pids = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                comm = (proc / "comm").read_text().strip()
                cwd = os.readlink(proc / "cwd")
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if comm in SERVER_NAMES and (cwd.startswith(mark) or mark.encode() in cmdline):
                pids.add(int(proc.name))
    return pids


def read_metrics(results: Path) -> list[dict[str, Any]]:
    files = list(results.glob("*/metrics.json"))
    assert len(files) == 1, f"expected one metrics.json under {results}, found {files}"
    rows: list[dict[str, Any]] = json.loads(files[0].read_text())
    return rows


def wait_for_address(proc: subprocess.Popen[str], timeout: float = 30) -> Endpoint:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        match = re.search(r"server listening on ([\d.]+):(\d+)", line)
        if match:
            return Endpoint(match.group(1), int(match.group(2)))
    raise AssertionError("kvperf --mode server never printed its address")


def free_port() -> int:
    """A loopback port nothing listens on now."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, timeout: float = 10) -> None:
    """Until something accepts connections on 127.0.0.1:``port``."""
    import socket
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on 127.0.0.1:{port}"
            time.sleep(0.05)


@contextlib.contextmanager
def plain_valkey() -> Any:
    """A valkey-server of the test's own (no persistence), listening when entered; yields
    (process, port); ended by its pid (continued first, in case the test stopped it)."""
    import signal
    port = free_port()
    proc = subprocess.Popen([require_binary("valkey-server"), "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port)
        yield proc, port
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def recording_proxy(kvload: Path, out: Path) -> Any:
    """A valkey-server of the test's own behind `kvload record` writing ``out``; yields the
    proxy's port; the proxy stopped with SIGINT (its trace finished) when the block ends."""
    import signal
    with plain_valkey() as (_, port):
        proxy_port = free_port()
        proxy = subprocess.Popen([str(kvload), "record", "--listen",
                                  f"127.0.0.1:{proxy_port}", "--upstream", f"127.0.0.1:{port}",
                                  "--out", str(out)], stderr=subprocess.PIPE, text=True)
        try:
            wait_listening(proxy_port)
            yield proxy_port
            proxy.send_signal(signal.SIGINT)
            assert proxy.wait(timeout=30) == 0, proxy.stderr.read() if proxy.stderr else ""
        finally:
            if proxy.poll() is None:
                proxy.kill()
                proxy.wait()
