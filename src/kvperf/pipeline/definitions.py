"""Executing benchmark definitions' plans: one fresh server per test, rows like any run's.

Per plan (definitions/plan.py): start the server with the plan's configuration (io-threads
as the topology says, pinned as kvperf trials are: server CPU 0, clients CPU 1 when both
exist), load a local ``dataset`` RDB, run the preload through memtier (kvload's front end
when memtier_benchmark is absent), send ``init_commands`` / ``init_lua``, verify
``check.keyspacelen`` (DBSIZE), run the clients at once, then read memtier's JSON:
``Totals`` gives the row's rps and latencies, the exporter's JSONPaths its metrics, the KPIs
their verdicts; INFO commandstats gives the command mix the server executed. Every row is
persisted before the next test (database, then metrics.json). A failed test is recorded
and the run goes on; Ctrl-C keeps the finished rows and stops only what kvperf started.

A cluster topology runs as kvperf's cluster trials do (its primaries formed into one cluster,
memtier with ``--cluster-mode``, DBSIZE and INFO summed over the nodes, init commands sent
to every node, accepted when one node runs it). Replicas are fresh servers of the same
configuration attached with REPLICAOF and in sync before the preload (after it with
``preload_before_replica``) and before measuring. A cluster with replicas and clients other
than memtier_benchmark are refused at run time with the reason, before any server starts.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from kvperf.core.errors import DriverError, Interrupted, KvperfError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.definitions import memtier as memtier_args
from kvperf.definitions.client import MEMTIER, ClientPlan
from kvperf.definitions.exporter import evaluate
from kvperf.definitions.kpis import KpiResult, check_all
from kvperf.definitions.plan import Plan
from kvperf.driver.benchmark_run import BenchmarkToolRun
from kvperf.driver.benchmark_run import command_mix as benchmark_mix
from kvperf.driver.benchmark_run import measurement as benchmark_measurement
from kvperf.driver.memtier import MemtierDriver, measurement
from kvperf.pipeline.model import Launcher
from kvperf.pipeline.prepare import validate_label
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import DefinitionTest, RunContext, TrialOutcome, definition_row, is_ok
from kvperf.server import stats as server_stats
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.instance import ServerGroup
from kvperf.server.process import read_cpu_times, wait_until
from kvperf.server.replication import attach, wait_in_sync
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")
TOOL_GRACE = 120.0  # seconds a memtier run may take beyond its --test-time
BENCHMARK_TIMEOUT = 900.0  # a request-bound redis-/valkey-benchmark run
BGSAVE_TIMEOUT = 600.0  # wait_for_bgsave: a background save still running before measuring


@dataclass(frozen=True)
class DefinitionOptions:
    """Validated options of ``kvperf run --definitions`` (built by the CLI)."""

    results_dir: Path = Path("results")
    label: str | None = None
    server_bin: str | None = None
    kvload: Path | None = None  # kvload for memtier's front end (default: on PATH)


@dataclass
class DefinitionRun:
    """Everything decided before the first server starts."""

    plans: tuple[Plan, ...]
    refused: tuple[tuple[Plan, str], ...]  # plans this stage cannot run, with the reason
    driver: MemtierDriver
    binary: ServerBinary
    context: RunContext
    out_dir: Path
    cpus: set[int]  # the CPUs kvperf may use (pinning() divides them per test)
    benchmark_tools: dict[str, BenchmarkToolRun] = field(default_factory=dict)


@dataclass
class TestResult:
    plan: Plan
    row: dict[str, Any]
    kpis: tuple[KpiResult, ...] = ()


@dataclass
class DefinitionsSummary:
    results: list[TestResult] = field(default_factory=list)
    metrics_path: Path | None = None

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [r.row for r in self.results]

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not is_ok(r.row))

    @property
    def kpis_failed(self) -> int:
        return sum(1 for r in self.results for k in r.kpis if not k.passed)


class DefinitionObserver(Protocol):
    def test_started(self, plan: Plan, position: int, total: int) -> None: ...

    def stage(self, plan: Plan, name: str) -> None: ...

    def test_finished(self, plan: Plan, result: TestResult) -> None: ...


class QuietObserver:
    def test_started(self, plan: Plan, position: int, total: int) -> None:
        pass

    def stage(self, plan: Plan, name: str) -> None:
        pass

    def test_finished(self, plan: Plan, result: TestResult) -> None:
        pass


Tools = dict[str, BenchmarkToolRun | str]  # redis-/valkey-benchmark found, or why not


def unsupported(plan: Plan, tools: Tools | None = None) -> str | None:
    """Why this stage cannot execute ``plan`` (its dry run still plans it), or None.
    ``tools``: the redis-/valkey-benchmark runs found (or why not), by tool name."""
    topology = plan.topology
    if topology.replicas and topology.cluster:
        return f"topology {topology.name}: a cluster with replicas is not run by kvperf yet"
    others = [c for c in plan.clients if c.tool != MEMTIER]
    if others and len(plan.clients) > 1:
        return f"client tool {others[0].tool} beside other clients is not run by kvperf yet"
    for client in others:
        found = (tools or {}).get(client.tool, f"{client.tool} was not looked for")
        if isinstance(found, str):
            return found
        too_old = found.too_old(client.min_tool_version)
        if too_old:
            return too_old
    return None


def _benchmark_tools(plans: tuple[Plan, ...]) -> Tools:
    tools: Tools = {}
    for name in {c.tool for p in plans for c in p.clients if c.tool != MEMTIER}:
        try:
            tools[name] = BenchmarkToolRun.find(name)
        except DriverError as exc:
            tools[name] = str(exc)
    return tools


def pinning(io_threads: int, cpus: set[int]) -> tuple[tuple[int, ...] | None,
                                                     tuple[int, ...] | None, str | None]:
    """Server CPUs, client CPUs and a note (pure). As kvperf's default trials: the server on
    CPU 0, the clients on CPU 1. A server with N io-threads gets CPUs 0…N-1 and the clients
    the next; when the host has too few, nothing is pinned (N threads on one CPU would
    measure the contention, not the server) and the note says so."""
    needed = max(io_threads, 1) + 1
    ordered = sorted(cpus)
    if len(ordered) < needed:
        note = (f"unpinned: {io_threads} io-threads and a client need {needed} CPUs, this "
                f"host has {len(ordered)}") if io_threads > 1 else None
        return None, None, note
    server = tuple(ordered[:needed - 1])
    return server, (ordered[needed - 1],), None


def prepare_definitions(plans: tuple[Plan, ...], options: DefinitionOptions) -> DefinitionRun:
    """Find the server and memtier (UsageError/DriverError before any server starts)."""
    binary = resolve(options.server_bin)
    driver = MemtierDriver.find(options.kvload)
    label = validate_label(options.label or binary.label)
    env = {**host_facts(), "tool": f"{driver.name} {driver.version}",
           "server_binary": str(binary.path), "server_source": binary.source}
    context = RunContext(label, None, driver.name, driver.version, binary.label, env,
                         Measure.TIMING)
    tools = _benchmark_tools(plans)
    runnable = tuple(p for p in plans if unsupported(p, tools) is None)
    refused = tuple((p, why) for p in plans if (why := unsupported(p, tools)) is not None)
    found = {k: v for k, v in tools.items() if isinstance(v, BenchmarkToolRun)}
    if found:
        env["benchmark_tools"] = {k: f"{v.version} {v.path}" for k, v in found.items()}
    return DefinitionRun(runnable, refused, driver, binary, context,
                         options.results_dir / label, available_cpus(), found)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:80]


def _test(plan: Plan) -> DefinitionTest:
    first = plan.clients[0] if plan.clients else None
    requests = first.requests if first and first.requests and first.requests.isdigit() else None
    identity = {"definition": plan.name, "topology": plan.topology.name,
                "server_config": plan.server_config,
                "clients": [c.argv for c in plan.clients],
                "preload": plan.preload.argv if plan.preload else None}
    io_threads = plan.topology.io_threads
    return DefinitionTest(plan.name, plan.topology.name, stable_id(identity),
                          io_threads if io_threads > 1 else None,
                          first.test_time if first else None,
                          int(requests) if requests else None, plan.keyspacelen,
                          plan.topology.cluster)


class DefinitionRunner:
    """Executes the runnable plans one after another, persisting every row."""

    def __init__(self, run: DefinitionRun, observer: DefinitionObserver | None = None,
                 store: TrialWriter | None = None, launcher: Launcher = ServerGroup) -> None:
        self.run = run
        self.observer: DefinitionObserver = observer or QuietObserver()
        self.store = store
        self.launcher = launcher
        self.metrics = MetricsFile(run.out_dir / "metrics.json")

    def execute(self) -> DefinitionsSummary:
        summary = DefinitionsSummary(metrics_path=self.metrics.path)
        total = len(self.run.plans)
        for position, plan in enumerate(self.run.plans, 1):
            self.observer.test_started(plan, position, total)
            result = self.run_test(plan, position)
            if self.store is not None:
                self.store.record(result.row, self.metrics.path)
            self.metrics.append(result.row)
            summary.results.append(result)
            self.observer.test_finished(plan, result)
        return summary

    def run_test(self, plan: Plan, position: int) -> TestResult:
        log_dir = (self.run.out_dir / "tests" /
                   f"{position:04d}-{_slug(plan.name)}-{_slug(plan.topology.name)}")
        log_dir.mkdir(parents=True, exist_ok=True)
        work = _TestRun(self.run, plan, log_dir, self.observer)
        try:
            self._on_server(work)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError, OSError) as exc:
            work.outcome.error = work.outcome.error or str(exc)
        if work.outcome.error:
            log.warning("%s on %s failed: %s", plan.name, plan.topology.name,
                        work.outcome.error)
        row = definition_row(_test(plan), self.run.context, work.outcome, work.details(),
                             datetime.now(UTC).astimezone())
        return TestResult(plan, row, work.kpis)

    def _on_server(self, work: _TestRun) -> None:
        server_cpus, work.client_cpus, note = pinning(work.plan.topology.io_threads,
                                                      self.run.cpus)
        if note:
            work.outcome.checks["pinning"] = note
        with _dataset_dir(work.plan) as data:
            setup = _server_setup(work.plan, server_cpus, data)
            group = self.launcher(self.run.binary, setup, work.log_dir, None)
            with contextlib.ExitStack() as stack:
                with work.stage("server_start"):
                    stack.enter_context(group)
                work.start_replicas = functools.partial(
                    self._start_replicas, work, stack, server_cpus, group.endpoints[0])
                work.outcome.pinning = {"server": group.pinning(),
                                        "client": _cpus_text(work.client_cpus)}
                applied = group.effective_config()
                if applied:
                    work.outcome.checks["server_config"] = applied
                try:
                    work.execute(tuple(group.endpoints), group.pids)
                except (DriverError, ConnectionLost) as exc:
                    health = group.health()
                    work.outcome.error = f"{health} (tool: {exc})" if health else str(exc)
                else:
                    work.outcome.error = group.health()


    def _start_replicas(self, work: _TestRun, stack: contextlib.ExitStack[bool | None],
                        cpus: tuple[int, ...] | None, primary: Endpoint) -> None:
        """The topology's replicas, each a fresh server replicating ``primary``, in sync;
        stopped with the primary (``stack``)."""
        setup = _server_setup(work.plan, cpus, None)
        count = work.plan.topology.replicas
        with work.stage("replicas"):
            for i in range(count):
                replica = self.launcher(self.run.binary, setup, work.log_dir, None,
                                        log_prefix=f"replica{i}")
                stack.enter_context(replica)
                attach(replica.endpoints[0], primary)
            wait_in_sync(primary, count)
        work.outcome.checks["replicas_in_sync"] = count


def _cpus_text(cpus: tuple[int, ...] | None) -> str | None:
    return ",".join(map(str, cpus)) if cpus else None


@contextlib.contextmanager
def _dataset_dir(plan: Plan) -> Iterator[Path | None]:
    """A private directory holding a copy of the plan's RDB (the server loads it at start)."""
    if plan.dataset is None:
        yield None
        return
    directory = Path(tempfile.mkdtemp(prefix="kvperf-dataset-"))
    try:
        shutil.copyfile(plan.dataset, directory / "dump.rdb")
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _server_setup(plan: Plan, cpus: tuple[int, ...] | None, data: Path | None) -> ServerSetup:
    config = tuple((k, v) for k, v in plan.server_config if k != "io-threads")
    if data is not None:
        config += (("dir", str(data)), ("dbfilename", "dump.rdb"))
    io_threads = plan.topology.io_threads
    topology = plan.topology
    return ServerSetup(topology.cluster, False,
                       io_threads if io_threads > 1 else None,
                       topology.primaries, cpus, config, (), ())


@dataclass
class _TestRun:
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
        with self.stage("measure"):
            documents = self._clients(endpoints[0])
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
                              f"the server holds {keys} (DBSIZE) after preload and init")

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
