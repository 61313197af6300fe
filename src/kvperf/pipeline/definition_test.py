"""One definition test's stages against its started servers: replicas, preload, init,
keyspace check, background save, the clients, then what the results say (row metrics,
exporter metrics, KPIs) and what the server executed (INFO commandstats, the command mix).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvperf.core.errors import DriverError
from kvperf.definitions import memtier as memtier_args
from kvperf.definitions.client import MEMTIER, ClientPlan
from kvperf.definitions.exporter import evaluate
from kvperf.definitions.kpis import KpiResult, check_all
from kvperf.definitions.plan import Plan
from kvperf.driver.benchmark_run import command_mix as benchmark_mix
from kvperf.driver.benchmark_run import measurement as benchmark_measurement
from kvperf.driver.memtier import measurement
from kvperf.pipeline.profiling import profile_result, profiling
from kvperf.results.row import TrialOutcome
from kvperf.server import stats as server_stats
from kvperf.server.process import read_cpu_times, wait_until
from kvperf.server.replication import wait_in_sync
from kvperf.server.resp import Endpoint, RespClient, RespError

if TYPE_CHECKING:
    from kvperf.pipeline.definitions import DefinitionObserver, DefinitionRun

TOOL_GRACE = 120.0  # seconds a memtier run may take beyond its --test-time
BENCHMARK_TIMEOUT = 900.0  # a request-bound redis-/valkey-benchmark run
BGSAVE_TIMEOUT = 600.0  # wait_for_bgsave: a background save still running before measuring


@dataclass
class TestRun:
    """One test's stages against a started server; collects the outcome."""

    run: DefinitionRun
    plan: Plan
    log_dir: Path
    observer: DefinitionObserver
    outcome: TrialOutcome = field(default_factory=TrialOutcome)
    kpis: tuple[KpiResult, ...] = ()
    metrics: dict[str, float | None] = field(default_factory=dict)
    mix: dict[str, Any] = field(default_factory=dict)
    client_cpus: tuple[int, ...] | None = None
    start_replicas: Callable[[], None] | None = None  # starts the topology's replicas, synced

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.observer.stage(self.plan, name)
        started = time.monotonic()
        try:
            yield
        finally:
            self.outcome.stage_seconds[name] = time.monotonic() - started

    def details(self) -> dict[str, Any]:
        return {"name": self.plan.name, "file": str(self.plan.definition.source),
                "topology": self.plan.topology.name,
                "override_test_time": self.plan.test_time_override,
                "metrics": self.metrics, "command_mix": self.mix,
                "kpis": [{"kpi": k.kpi.describe(), "mode": k.kpi.mode, "path": k.kpi.path,
                          "bound": k.kpi.bound, "value": k.value, "passed": k.passed,
                          "reason": k.reason} for k in self.kpis],
                "tools": [self._tool(c) for c in self.plan.clients],
                "notes": list(self.plan.notes)}

    def _tool(self, client: ClientPlan) -> str:
        if client.tool == MEMTIER:
            return f"{self.run.driver.name} {self.run.driver.version}"
        found = self.run.benchmark_tools.get(client.tool)
        return f"{client.tool} {found.version}" if found else client.tool

    def _memtier(self, runs: list[tuple[ClientPlan, Path]], endpoint: Endpoint
                 ) -> list[dict[str, Any]]:
        longest = max((c.test_time or 0) for c, _ in runs)
        return self.run.driver.run([(c.argv, out) for c, out in runs], endpoint,
                                   self.log_dir / "tool.log", self.client_cpus,
                                   longest + TOOL_GRACE + (0 if longest else 600),
                                   self.plan.topology.cluster)

    def execute(self, endpoints: tuple[Endpoint, ...], pids: list[int]) -> None:
        replicas = self.plan.topology.replicas
        if replicas and not self.plan.replica_after_preload:
            self._replicas()
        if self.plan.preload is not None:
            with self.stage("preload"):
                self._memtier([(self.plan.preload, self.log_dir / "preload.json")],
                              endpoints[0])
        if self.plan.replica_after_preload:
            self._replicas()
        with self.stage("init"):
            _init(endpoints, self.plan)
        self._check_keyspace(endpoints)
        if self.plan.definition.dbconfig.wait_for_bgsave:
            with self.stage("bgsave"):
                if not wait_until(lambda: not server_stats.bgsave_in_progress(endpoints),
                                  BGSAVE_TIMEOUT, interval=0.2):
                    raise DriverError(f"a BGSAVE still runs after {BGSAVE_TIMEOUT:.0f}s")
        if replicas:
            with self.stage("replica_sync"):
                wait_in_sync(endpoints[0], replicas)
        server_stats.reset_stats(endpoints)
        cpu_before = _cpu(pids)
        with (profiling(self.run.profile, pids, self.log_dir) as profiled,
              self.stage("measure")):
            documents = self._clients(endpoints[0])
        self.outcome.profile = profile_result(
            profiled, f"{self.plan.name} [{self.plan.topology.name}]", self.run.out_dir)
        self._results(documents)
        self._server_side(endpoints, pids, cpu_before)

    def _clients(self, endpoint: Endpoint) -> list[dict[str, Any]]:
        clients = self.plan.clients
        if clients and clients[0].tool != MEMTIER:  # alone (unsupported() checked)
            tool = self.run.benchmark_tools[clients[0].tool]
            return [tool.run(clients[0].argv, endpoint, self.log_dir / "tool.log",
                             self.client_cpus, BENCHMARK_TIMEOUT, self.plan.topology.cluster)]
        return self._memtier([(c, self.log_dir / f"client-{i}.json")
                              for i, c in enumerate(clients)], endpoint)

    def _replicas(self) -> None:
        assert self.start_replicas is not None
        self.start_replicas()

    def _check_keyspace(self, endpoints: tuple[Endpoint, ...]) -> None:
        keys = 0
        for endpoint in endpoints:
            with RespClient(endpoint) as client:
                reply = client.call("DBSIZE")
            if not isinstance(reply, int):
                raise DriverError(f"DBSIZE answered {reply!r} at {endpoint}")
            keys += reply
        self.outcome.checks["keyspacelen"] = keys
        expected = self.plan.keyspacelen
        if expected is not None and keys != expected:
            raise DriverError(f"check.keyspacelen: the definition expects {expected} keys, "
                              f"the server holds {keys} (DBSIZE) after preload and init"
                              f"{self._preload_errors()}")

    def _preload_errors(self) -> str:
        """What the preload's log says of error replies ("" when nothing)."""
        log = self.log_dir / "tool-0.log"
        text = log.read_text(errors="replace") if self.plan.preload and log.is_file() else ""
        found = ERROR_REPLIES.search(text)
        return (f"; the preload got {found['count']} error replies (see "
                f"{self.log_dir.name}/{log.name}): does this server have its command?"
                if found else "")

    def _results(self, documents: list[dict[str, Any]]) -> None:
        measure = measurement if "ALL STATS" in documents[0] else benchmark_measurement
        first = measure(documents[0])
        if len(documents) > 1:  # several clients at once: their throughputs add up
            first = replace(first, rps=sum(measure(d).rps for d in documents))
            self.outcome.checks["clients"] = len(documents)
        self.outcome.measurement = first
        self.metrics = {m.name: m.value for m in evaluate(self.plan.metrics, documents[0])}
        self.kpis = check_all(self.plan.kpis, documents[0])

    def _server_side(self, endpoints: tuple[Endpoint, ...], pids: list[int],
                     before: float | None) -> None:
        collected = server_stats.collect(endpoints)
        stats = collected.get("commandstats", {})
        expected = _expected_mix(self.plan.clients)
        calls = {name: _calls(name, stats) for name in expected}
        total = sum(calls.values())
        self.mix = {name: {"expected": round(share, 4), "calls": calls[name],
                           "executed": round(calls[name] / total, 4) if total else None}
                    for name, share in expected.items()}
        self.outcome.server = {"calls": total, "keyspace_hits": collected.get("keyspace_hits"),
                               "keyspace_misses": collected.get("keyspace_misses"),
                               "commands": {n: {"calls": s["calls"],
                                                "usec_per_call": s["usec_per_call"]}
                                            for n, s in stats.items()}}
        nodes = collected.get("node_calls", [])
        if len(nodes) > 1:
            self.outcome.server["calls_per_node"] = [
                sum(c for n, c in node.items() if n.split("|")[0] in expected)
                for node in nodes]
        after = _cpu(pids)
        if before is not None and after is not None:
            self.outcome.server["cpu_seconds"] = round(after - before, 3)
        missing = [name.upper() for name, share in expected.items() if share and not calls[name]]
        if missing:  # every such request got an error reply (an unknown command, say)
            raise DriverError(f"the server executed no {', '.join(missing)} call while the "
                              f"clients ran (error replies; see {self.log_dir.name}/tool-*.log)"
                              f": does this server have {'them' if len(missing) > 1 else 'it'}?")


ERROR_REPLIES = re.compile(r"WARNING: (?P<count>\d+) error replies")  # kvload memtier's log


def _calls(name: str, stats: dict[str, Any]) -> int:
    return sum(s["calls"] for n, s in stats.items() if n == name or n.startswith(name + "|"))


def _client_mix(client: ClientPlan) -> dict[str, float]:
    if client.tool == MEMTIER:
        return memtier_args.command_mix(memtier_args.parse(list(client.argv)))
    return benchmark_mix(client.argv)


def _expected_mix(clients: tuple[ClientPlan, ...]) -> dict[str, float]:
    """The clients' command mix, each client weighted equally (shares summing to 1)."""
    out: dict[str, float] = {}
    for client in clients:
        for name, share in _client_mix(client).items():
            out[name] = out.get(name, 0.0) + share / len(clients)
    return out


def _cpu(pids: list[int]) -> float | None:
    times = [read_cpu_times(pid) for pid in pids]
    return None if not times or any(t is None for t in times) else sum(
        t.total for t in times if t)


def _answer(client: RespClient, command: tuple[str, ...]) -> Any:
    try:
        return client.call(*command)
    except RespError as exc:  # an error reply: the caller decides
        return exc


def _init(endpoints: tuple[Endpoint, ...], plan: Plan) -> None:
    """init_commands, then init_lua (each script run by EVAL with no keys), sent to every
    node; each must succeed on one node at least (a cluster redirects a key's command to
    the node holding its slot, and a node-wide command runs on all)."""
    calls = [(" ".join(c), c) for c in plan.init_commands]
    calls += [("init_lua", ("EVAL", script, "0")) for script in plan.init_lua]
    if not calls:
        return
    answers: dict[str, list[Any]] = {what: [] for what, _ in calls}
    for endpoint in endpoints:
        with RespClient(endpoint, timeout=60) as client:
            for what, command in calls:
                answers[what].append(_answer(client, command))
    for what, replies in answers.items():
        if all(isinstance(reply, RespError) for reply in replies):
            raise DriverError(f"{what}: the server answered {replies[0]}")
