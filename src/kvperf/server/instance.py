"""ServerGroup: the context manager that starts one trial's server nodes and always stops them."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kvperf.core.cpus import format_cpu_list
from kvperf.core.errors import ServerError
from kvperf.core.secret import Secret
from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import ServerBinary
from kvperf.server.cluster import attach_replicas, form_cluster
from kvperf.server.conf import LOOPBACK, NodePaths, find_crash, node_argv, write_auth_conf
from kvperf.server.host import free_port
from kvperf.server.process import ManagedProcess, descends_from, wait_until
from kvperf.server.replication import attach, wait_in_sync
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info
from kvperf.server.tls import TlsFiles
from kvperf.server.workdirs import make_workdir

READY_TIMEOUT = 20.0
STOP_GRACE = 3.0


@dataclass
class Node:
    """One running server process and where it listens."""

    process: ManagedProcess
    endpoint: Endpoint
    log: Path


@dataclass
class ServerGroup:
    """All nodes of one trial's server. ``with`` starts them ready; exit stops every pid."""

    binary: ServerBinary
    setup: ServerSetup
    log_dir: Path
    tls: TlsFiles | None = None
    log_prefix: str = "server"
    wrap: Callable[[int, list[str]], list[str]] | None = None  # (node index, argv) → argv
    ready_timeout: float = READY_TIMEOUT
    stop_grace: float = STOP_GRACE
    bind: str = LOOPBACK  # --mode server --bind: beyond loopback only with a password
    port: int | None = None  # the first node's port (default: a free one)
    password: Secret | None = None  # requirepass, from a 0600 file in the node's workdir
    nodes: list[Node] = field(default_factory=list)  # the primaries
    replicas: list[Node] = field(default_factory=list)  # setup.replicas per primary, in order
    faulted: set[int] = field(default_factory=set)  # pids a fault schedule killed on purpose
    _tmp: Path | None = None

    @property
    def endpoints(self) -> list[Endpoint]:
        """The primaries (where keys are counted and seeded)."""
        return [n.endpoint for n in self.nodes]

    @property
    def replica_endpoints(self) -> list[Endpoint]:
        return [n.endpoint for n in self.replicas]

    @property
    def pids(self) -> list[int]:
        """Every node's, replicas' too (they serve reads: their CPU is the server's)."""
        return [n.process.pid for n in (*self.nodes, *self.replicas)]

    def __enter__(self) -> ServerGroup:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _start(self) -> None:
        self._tmp = make_workdir()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        count = self.setup.node_count
        for i in range(count):
            self.nodes.append(self._spawn(i))
        for i in range(count * self.setup.replicas):
            self.replicas.append(self._spawn(count + i))
        for node in (*self.nodes, *self.replicas):
            self._wait_ready(node)
        if self.setup.cluster_mode:
            form_cluster(self.endpoints)
        if self.replicas:
            self._attach_replicas()
        self._apply_config_set()
        self._check_pinning()

    def _attach_replicas(self) -> None:
        """Replica j of primary i is ``replicas[i * per + j]``: CLUSTER REPLICATE in a
        cluster, REPLICAOF standalone; then until every one is online at its primary's
        offset."""
        per = self.setup.replicas
        groups = [self.replica_endpoints[i * per:(i + 1) * per] for i in range(len(self.nodes))]
        for primary in self.endpoints:  # the first sync at once, not after Valkey's 5 s
            with RespClient(primary) as client:  # wait for more replicas (setup time only)
                client.call("CONFIG", "SET", "repl-diskless-sync-delay", "0")
        if self.setup.cluster_mode:
            attach_replicas(self.endpoints, groups)
        else:
            for replica in groups[0]:
                attach(replica, self.endpoints[0])
        for primary in self.endpoints:
            wait_in_sync(primary, per)

    def respawn(self, i: int) -> None:
        """Start node i again on its port and workdir after it died (a fault's restart);
        returns when it answers PING. The trial's CONFIG SETs are its startup flags this
        time: a persistence setting (appendonly) applies to what it loads."""
        old = self.nodes[i]
        old.process.stop(grace=0.0)  # reaps the killed process
        self.nodes[i] = self._spawn(i, old.endpoint.port, self.setup.config_set)
        self._wait_ready(self.nodes[i])

    def _spawn(self, i: int, port: int | None = None,
               flags: tuple[tuple[str, str], ...] = ()) -> Node:
        assert self._tmp is not None
        workdir = self._tmp / f"node{i}"
        workdir.mkdir(exist_ok=port is not None)
        log = self.log_dir / f"{self.log_prefix}-node{i}.log"
        port = port or (self.port if self.port and i == 0
                        else free_port(cluster=self.setup.cluster_mode))
        auth = write_auth_conf(workdir, self.password) if self.password else None
        argv = node_argv(self.binary.path, self.setup, port, NodePaths(workdir, log), self.tls,
                         self.bind, auth)
        argv += [arg for name, value in flags for arg in (f"--{name}", value)]
        if self.wrap:
            argv = self.wrap(i, argv)  # e.g. valgrind in instruction mode
        process = ManagedProcess(argv, cpus=self.setup.cpus, stdout=log, cwd=workdir)
        ca = self.tls.ca if self.tls else None
        return Node(process, Endpoint(self.bind, port, ca, self.password), log)

    def _wait_ready(self, node: Node) -> None:
        def answers() -> bool:
            if not node.process.alive():
                raise ServerError(f"server {node.endpoint} {node.process.exit_description()} "
                                  f"during startup: {self._log_tail(node)}")
            return _answers_from(node)

        if not wait_until(answers, self.ready_timeout):
            raise ServerError(f"server {node.endpoint} did not answer PING within "
                              f"{self.ready_timeout:.0f}s: {self._log_tail(node)}")

    def _apply_config_set(self) -> None:
        for node in (*self.nodes, *self.replicas):
            for name, value in self.setup.config_set:
                try:
                    with RespClient(node.endpoint) as client:
                        client.call("CONFIG", "SET", name, value)
                except (RespError, ConnectionLost) as exc:
                    raise ServerError(f"CONFIG SET {name} {value} failed: {exc}") from None

    def _check_pinning(self) -> None:
        if not self.setup.cpus:
            return
        for node in (*self.nodes, *self.replicas):
            allowed = node.process.allowed_cpus()
            if allowed != self.setup.cpus:
                raise ServerError(
                    f"server pid {node.process.pid} runs on CPUs "
                    f"{format_cpu_list(allowed) if allowed else '?'}, expected "
                    f"{format_cpu_list(self.setup.cpus)} (taskset failed?)")

    def effective_config(self) -> dict[str, str]:
        """CONFIG GET of every setting kvperf applied, read back from the first node."""
        names = [n for n, _ in (*self.setup.custom_configs, *self.setup.config_set)]
        values: dict[str, str] = {}
        if not names or not self.nodes:
            return values
        with RespClient(self.nodes[0].endpoint) as client:
            for name in names:
                reply = client.call("CONFIG", "GET", name)
                pairs = reply if isinstance(reply, list) else []
                for key, value in zip(pairs[::2], pairs[1::2], strict=True):
                    if isinstance(key, bytes) and isinstance(value, bytes):
                        values[key.decode()] = value.decode()
        return values

    def pinning(self) -> str | None:
        """The CPUs the first node is allowed to run on, read from /proc."""
        allowed = self.nodes[0].process.allowed_cpus() if self.nodes else None
        return format_cpu_list(allowed) if allowed else None

    def health(self) -> str | None:
        """None when every node is alive and its log shows no crash; else the reason."""
        for node in (*self.nodes, *self.replicas):
            if node.process.pid in self.faulted:
                continue  # killed by the trial's fault schedule: what it measured
            crash = find_crash(_read(node.log))
            if crash:
                return f"server {node.endpoint} crashed: {crash}"
            if not node.process.alive():
                return f"server {node.endpoint} (pid {node.process.pid}) " \
                       f"{node.process.exit_description()}"
        return None

    def stop(self) -> None:
        """Stop every node this group started (SHUTDOWN NOSAVE → SIGTERM → SIGKILL)."""
        for node in (*self.replicas, *self.nodes):  # replicas first: no resync attempts
            node.process.stop(graceful=functools.partial(_shutdown, node.endpoint),
                              grace=self.stop_grace)
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _log_tail(self, node: Node, lines: int = 5) -> str:
        tail = _read(node.log).strip().splitlines()[-lines:]
        return " | ".join(tail) if tail else f"(log {node.log} is empty)"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _answers_from(node: Node) -> bool:
    """PONG from the node's own process. The port was free when chosen, not reserved: until
    a slow start binds it (valgrind's takes seconds) another test's or tool's server can hold
    it, and its PONG made a trial's load hit a port nothing listened on a moment later (CI:
    kvload refused at 127.0.0.1:57265, 0.4 s before the valgrind node bound it). INFO's
    ``process_id`` must be the node's pid or a descendant's (a wrapper script that forks);
    a server whose INFO is disabled or says no pid is taken at its word."""
    try:
        with RespClient(node.endpoint, timeout=1.0) as client:
            if client.call("PING") != b"PONG":
                return False
            try:
                info = client.call("INFO", "server")
            except RespError:
                return True
    except (ConnectionLost, RespError, OSError):
        return False
    served = parse_info(info).get("process_id", "") if isinstance(info, bytes) else ""
    return not served.isdigit() or descends_from(int(served), node.process.pid)


def _shutdown(endpoint: Endpoint) -> None:
    try:
        with RespClient(endpoint, timeout=1.0) as client:
            client.pipeline([("SHUTDOWN", "NOSAVE")])
    except (ConnectionLost, RespError, OSError):
        pass
