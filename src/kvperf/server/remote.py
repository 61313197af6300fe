"""A server on another host, over SSH (``run --server-host ssh://user@host[:port]``).

``SshHost`` holds one OpenSSH control master for the run (``ssh -M -N``, BatchMode, started
through core/proc so it dies with kvperf), a per-run temporary directory on the remote host
and the server binary copied there (scp). ``RemoteServerGroup`` is a ``ServerHandle``: a fresh
server per trial, started by a small remote shell wrapper whose stdin is kvperf's pipe:

* the first line it reads is the ``requirepass`` line (the password never enters an argv,
  local or remote), written to a 0600 file that the server reads as its config file;
* it starts the server (taskset-pinned when the setup names CPUs) with its output on the ssh
  channel, which kvperf writes to the trial's local log (crash detection as for local nodes);
* it prints ``kvperf-remote-pid N`` and then waits for stdin to close — a closed stdin (kvperf
  stopped, killed, or its ssh gone) makes it kill the server (TERM, then KILL).

Teardown: SHUTDOWN NOSAVE over RESP, stdin closed, then ``kill -9`` of the pid over the
control connection; the remote directory is removed when the host closes. CPU time comes
from the remote ``/proc/<pid>/stat``; INFO/commandstats come over RESP as for local servers.
"""

from __future__ import annotations

import contextlib
import functools
import random
import secrets
import shlex
import shutil
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from kvperf.core import proc, secret
from kvperf.core.cpus import format_cpu_list, parse_cpu_list
from kvperf.core.errors import CommandError, ServerError, UsageError
from kvperf.core.secret import Secret
from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import ServerBinary
from kvperf.server.conf import NodePaths, find_crash, node_argv
from kvperf.server.process import ManagedProcess, wait_until
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info
from kvperf.server.tls import TlsFiles
from kvperf.server.workdirs import make_workdir

PID_MARK = "kvperf-remote-pid"
DEFAULT_PORTS = (20000, 44000)  # --remote-ports: where a remote server's port is drawn from
PORT_TRIES = 5  # ports tried per trial when the drawn one is taken on the remote host
PORT_TAKEN = ("Address already in use", "Failed listening on port")
DIR_MARK = "kvperf-remote-dir"
# The control master's own session: makes the per-run directory, prints it, and removes it
# when its stdin closes (kvperf done, or gone).
MASTER_COMMAND = ('d=$(mktemp -d /tmp/kvperf-remote-XXXXXX) || exit 1; echo "' + DIR_MARK
                  + ' $d"; cat > /dev/null; rm -rf "$d"')
# The remote wrapper: $1 = node dir, the rest = the server's argv (its config file is
# auth.conf in the node dir). Reads the requirepass line, starts the server, waits for EOF.
WRAPPER = (
    'set -u; d=$1; shift; mkdir -p "$d"; cd "$d" || exit 1; umask 077; '
    'IFS= read -r line || exit 1; printf "%s\\n" "$line" > auth.conf; '
    '"$@" 2>&1 & pid=$!; echo "' + PID_MARK + ' $pid"; '
    'trap "kill $pid 2>/dev/null" HUP TERM; '
    'cat > /dev/null; kill $pid 2>/dev/null; i=0; '
    'while kill -0 $pid 2>/dev/null && [ $i -lt 10 ]; do sleep 0.3; i=$((i+1)); done; '
    'kill -9 $pid 2>/dev/null; cd /; rm -rf "$d"'
)


@dataclass(frozen=True)
class SshTarget:
    """``ssh://[user@]host[:port]`` parsed."""

    user: str | None
    host: str
    port: int | None

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host


def parse_target(text: str) -> SshTarget:
    """UsageError unless ``text`` is ``ssh://[user@]host[:port]`` with nothing else."""
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (parts.scheme != "ssh" or not parts.hostname or parts.password or port == -1
            or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise UsageError(f"--server-host {text!r}: expected ssh://[user@]host[:port]")
    return SshTarget(parts.username, parts.hostname, port)


def _address(host: str) -> str:
    """The IP address the load goes to (the ssh host, resolved here)."""
    try:
        return str(socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0])
    except OSError as exc:
        raise UsageError(f"--server-host: cannot resolve {host!r}: {exc}") from None


@dataclass
class SshHost:
    """One remote host for a run: control master, remote temp dir, the copied binaries (one
    per side of an interleaved run, copied when first used)."""

    target: SshTarget
    ssh_config: Path | None = None
    remote_binary: str | None = None  # a path on the remote host instead of a copy
    ports: tuple[int, int] = DEFAULT_PORTS  # the servers' port range there (inclusive)
    password: Secret = field(default_factory=secret.generate)
    address: str = ""
    remote_dir: str = ""
    _local_dir: Path | None = None
    _master: ManagedProcess | None = None
    _copies: dict[Path, str] = field(default_factory=dict)
    _copying: threading.Lock = field(default_factory=threading.Lock)  # duet: sides at once

    def options(self) -> list[str]:
        assert self._local_dir is not None
        opts = ["-o", "BatchMode=yes", "-o", f"ControlPath={self._local_dir}/cm",
                "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
                "-o", "ServerAliveCountMax=3"]
        return [*(["-F", str(self.ssh_config)] if self.ssh_config else []), *opts]

    def ssh_argv(self, command: str) -> list[str]:
        port = ["-p", str(self.target.port)] if self.target.port else []
        return ["ssh", *self.options(), *port, "-o", "ControlMaster=no",
                self.target.destination, command]

    def run(self, command: str, timeout: float = 30.0) -> str:
        """A short remote command over the control connection; its stdout."""
        done = proc.run(self.ssh_argv(command), timeout=timeout,
                        name=f"ssh {self.target.destination} {command[:60]}")
        if done.returncode != 0:
            raise ServerError(f"on {self.target.destination}: `{command[:80]}` exited with "
                              f"{done.returncode}: {done.output.strip()[-300:]}")
        return done.stdout

    def __enter__(self) -> SshHost:
        self.address = _address(self.target.host)
        self._local_dir = make_workdir()  # swept by the next kvperf if this one is killed
        try:
            self._start_master()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _start_master(self) -> None:
        port = ["-p", str(self.target.port)] if self.target.port else []
        argv = ["ssh", *self.options(), *port, "-o", "ControlMaster=yes",
                "-o", "ControlPersist=no", self.target.destination, MASTER_COMMAND]
        assert self._local_dir is not None
        log_path = self._local_dir / "master.log"
        self._master = ManagedProcess(argv, stdout=log_path, stdin_pipe=True)

        def ready() -> bool:
            log = _read(log_path)
            if self._master is not None and not self._master.alive():
                raise ServerError(f"ssh to {self.target.destination} failed: "
                                  f"{log.strip()[-300:]}")
            for line in log.splitlines():
                if line.startswith(DIR_MARK):
                    self.remote_dir = line.split(maxsplit=1)[1]
            return bool(self.remote_dir)

        if not wait_until(ready, 20.0, interval=0.2):
            raise ServerError(f"ssh to {self.target.destination}: no connection within 20 s")

    def server_path(self, binary: ServerBinary) -> str:
        """Where ``binary`` is on the remote host: --remote-server-bin, or a copy (scp)."""
        if self.remote_binary:
            return self.remote_binary
        with self._copying:
            return self._copy(binary)

    def _copy(self, binary: ServerBinary) -> str:
        if binary.path not in self._copies:
            path = f"{self.remote_dir}/{len(self._copies)}/{binary.path.name}"
            self.run(f"mkdir {shlex.quote(path.rsplit('/', 1)[0])}")
            port = ["-P", str(self.target.port)] if self.target.port else []
            destination = f"{self.target.destination}:{path}"
            done = proc.run(["scp", "-q", *self.options(), *port, str(binary.path),
                             destination], timeout=120, name=f"scp to {destination}")
            if done.returncode != 0:
                raise ServerError(f"copying {binary.path} to {destination} failed: "
                                  f"{done.output.strip()[-300:]}")
            self._copies[binary.path] = path
        return self._copies[binary.path]

    def close(self) -> None:
        """Close the master's stdin (its session removes the remote directory), stop it by
        pid, remove the local control directory."""
        if self._master is not None:
            stdin = self._master.popen.stdin
            with contextlib.suppress(OSError):
                if stdin is not None:
                    stdin.close()
            self._master.wait(5.0)
            self._master.stop(grace=2.0)
            self._master = None
        if self._local_dir is not None:
            shutil.rmtree(self._local_dir, ignore_errors=True)
            self._local_dir = None

    def launcher(self) -> functools.partial[RemoteServerGroup]:
        """The pipeline's Launcher: one RemoteServerGroup per trial on this host."""
        return functools.partial(RemoteServerGroup, host=self)


class PortTaken(ServerError):
    """The remote server could not listen: its port is in use there (another is tried)."""


def parse_ports(text: str) -> tuple[int, int]:
    """``--remote-ports LO-HI`` (or one port); UsageError when it is not a port range."""
    low, _, high = text.partition("-")
    try:
        ports = (int(low), int(high or low))
    except ValueError:
        ports = (0, -1)
    if not 1 <= ports[0] <= ports[1] <= 65535:
        raise UsageError(f"--remote-ports {text!r}: expected LO-HI, ports 1-65535 with LO ≤ HI "
                         "(e.g. 30000-30099)")
    return ports


def port_order(ports: tuple[int, int], start: int, tries: int) -> list[int]:
    """The ports a trial tries: from ``start`` on, wrapping within the range (pure)."""
    low, high = ports
    count = high - low + 1
    return [low + (start - low + k) % count for k in range(min(tries, count))]


@dataclass
class RemoteServerGroup:
    """One trial's server on the remote host (standalone only). ``with`` starts it ready;
    leaving stops it and checks it is gone. Called as a Launcher:
    ``(binary, setup, log_dir, tls, host=…)``."""

    binary: ServerBinary
    setup: ServerSetup
    log_dir: Path
    tls: TlsFiles | None = None
    host: SshHost | None = None
    ready_timeout: float = 20.0
    port: int = 0
    remote_pid: int | None = None
    _process: ManagedProcess | None = None
    _node_dir: str = ""
    _log_from: int = 0  # where this attempt's output starts in the trial's log
    _answered: bool = False  # our server (by pid) answered on self.port: SHUTDOWN reaches it

    @property
    def log(self) -> Path:
        return self.log_dir / "server-node0.log"

    @property
    def endpoints(self) -> list[Endpoint]:
        assert self.host is not None
        return [Endpoint(self.host.address, self.port, None, self.host.password)]

    @property
    def pids(self) -> list[int]:
        return [self.remote_pid] if self.remote_pid else []

    @property
    def replica_endpoints(self) -> list[Endpoint]:
        return []  # replicas are refused with --server-host (pipeline/request/common.py)

    def __enter__(self) -> RemoteServerGroup:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _argv(self) -> list[str]:
        assert self.host is not None
        # unique per attempt: a duet's sides start servers at once, maybe on one port
        self._node_dir = f"{self.host.remote_dir}/node-{self.port}-{secrets.token_hex(4)}"
        argv = node_argv(Path(self.host.server_path(self.binary)), self.setup, self.port,
                         NodePaths(Path(self._node_dir), self.log), None, self.host.address,
                         Path("auth.conf"))
        if self.setup.cpus:
            argv = ["taskset", "-c", format_cpu_list(self.setup.cpus), *argv]
        return ["sh", "-c", WRAPPER, "kvperf-remote", self._node_dir, *argv]

    def _start(self) -> None:
        """Start on a port of the host's range; a port taken there → the next one."""
        assert self.host is not None
        low, high = self.host.ports
        tried = port_order(self.host.ports, random.randint(low, high), PORT_TRIES)
        for attempt, port in enumerate(tried, 1):
            self.port = port
            try:
                self._start_on_port()
                return
            except PortTaken:
                if attempt == len(tried):
                    raise
                self.stop()

    def _start_on_port(self) -> None:
        assert self.host is not None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._log_from = self.log.stat().st_size if self.log.exists() else 0
        command = " ".join(shlex.quote(a) for a in self._argv())
        self._process = ManagedProcess(self.host.ssh_argv(command), stdout=self.log,
                                       stdin_pipe=True)
        stdin = self._process.popen.stdin
        assert stdin is not None
        stdin.write(f"requirepass {secret.config_quoted(self.host.password)}\n".encode())
        stdin.flush()
        if not wait_until(self._has_pid, self.ready_timeout):
            raise ServerError(f"remote server on {self.host.target.destination} did not start: "
                              f"{self._log_tail()}")
        if not wait_until(self._pings, self.ready_timeout):
            raise ServerError(f"remote server {self.endpoints[0]} (pid {self.remote_pid}) did "
                              f"not answer within {self.ready_timeout:.0f}s: "
                              f"{self._log_tail()}")
        self._config_set()

    def _output(self) -> str:
        """This attempt's part of the trial's log."""
        return _read(self.log)[self._log_from:]

    def _has_pid(self) -> bool:
        for line in self._output().splitlines():
            if line.startswith(PID_MARK):
                self.remote_pid = int(line.split()[1])
                return True
        if self._process is not None and not self._process.alive():
            raise ServerError(f"ssh {self._process.exit_description()}: {self._log_tail()}")
        return False

    def _pings(self) -> bool:
        output = self._output()
        if any(marker in output for marker in PORT_TAKEN):
            assert self.host is not None
            raise PortTaken(f"port {self.port} is in use on {self.host.target.destination}: "
                            f"{self._log_tail()}")
        if find_crash(output) or (self._process and not self._process.alive()):
            raise ServerError(f"remote server exited during startup: {self._log_tail()}")
        try:
            with RespClient(self.endpoints[0], timeout=1.0) as client:
                reply = client.call("INFO", "server")
        except (ConnectionLost, RespError, OSError):
            return False
        # the server answering is ours, not a partner's that took the port first (duet)
        info = parse_info(reply if isinstance(reply, bytes) else b"")
        self._answered = info.get("process_id") == str(self.remote_pid)
        return self._answered

    def _config_set(self) -> None:
        for name, value in self.setup.config_set:
            try:
                with RespClient(self.endpoints[0]) as client:
                    client.call("CONFIG", "SET", name, value)
            except (RespError, ConnectionLost) as exc:
                raise ServerError(f"CONFIG SET {name} {value} failed: {exc}") from None

    def cpu_seconds(self) -> float | None:
        """utime + stime of the remote server from its /proc/<pid>/stat."""
        if self.host is None or self.remote_pid is None:
            return None
        try:
            out = self.host.run(f"cat /proc/{self.remote_pid}/stat && getconf CLK_TCK")
        except (ServerError, CommandError):
            return None
        lines = out.strip().splitlines()
        stat, hz = lines[0], int(lines[-1])
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / hz

    def pinning(self) -> str | None:
        if self.host is None or self.remote_pid is None:
            return None
        try:
            status = self.host.run(f"cat /proc/{self.remote_pid}/status")
        except (ServerError, CommandError):
            return None
        for line in status.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return format_cpu_list(parse_cpu_list(line.split(":", 1)[1].strip()))
        return None

    def effective_config(self) -> dict[str, str]:
        values: dict[str, str] = {}
        names = [n for n, _ in (*self.setup.custom_configs, *self.setup.config_set)]
        if not names or self.remote_pid is None:
            return values
        with RespClient(self.endpoints[0]) as client:
            for name in names:
                reply = client.call("CONFIG", "GET", name)
                pairs = reply if isinstance(reply, list) else []
                for key, value in zip(pairs[::2], pairs[1::2], strict=True):
                    if isinstance(key, bytes) and isinstance(value, bytes):
                        values[key.decode()] = value.decode()
        return values

    def health(self) -> str | None:
        crash = find_crash(_read(self.log))
        if crash:
            return f"remote server {self.endpoints[0]} crashed: {crash}"
        if self._process is not None and not self._process.alive():
            return f"remote server {self.endpoints[0]}: ssh {self._process.exit_description()}"
        return None

    def stop(self) -> None:
        """SHUTDOWN NOSAVE (only to a server that answered as ours: a port we failed to take
        is another's), stdin closed (the wrapper kills the server), kill -9 by pid."""
        if self.remote_pid is not None and self._answered:
            with (contextlib.suppress(ConnectionLost, RespError, OSError),
                  RespClient(self.endpoints[0], timeout=1.0) as client):
                client.pipeline([("SHUTDOWN", "NOSAVE")])
        if self._process is not None:
            stdin = self._process.popen.stdin
            with contextlib.suppress(OSError):
                if stdin is not None:
                    stdin.close()
            self._process.stop(grace=3.0)
            self._process = None
        if self.remote_pid is not None and self.host is not None:
            with contextlib.suppress(ServerError, CommandError):
                node = shlex.quote(self._node_dir)
                pid = self.remote_pid
                self.host.run(f'[ "$(readlink /proc/{pid}/cwd)" = {node} ] && kill -9 {pid}; '
                              f"rm -rf {node}; true")
            self.remote_pid = None
        self._answered = False

    def _log_tail(self, lines: int = 5) -> str:
        tail = self._output().strip().splitlines()[-lines:]
        return " | ".join(tail) if tail else f"(log {self.log} is empty)"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
