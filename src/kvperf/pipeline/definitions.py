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
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from kvperf.analysis.comparison import GroupKey
from kvperf.config.model import ProfileSettings
from kvperf.core.errors import DriverError, Interrupted, KvperfError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.definitions.client import MEMTIER
from kvperf.definitions.kpis import KpiResult
from kvperf.definitions.plan import Plan
from kvperf.driver.benchmark_run import BenchmarkToolRun
from kvperf.driver.memtier import MemtierDriver
from kvperf.pipeline.definition_test import TestRun
from kvperf.pipeline.model import Launcher
from kvperf.pipeline.prepare import validate_label
from kvperf.pipeline.profiling import check_settings
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import DefinitionTest, Row, RunContext, definition_row, is_ok
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.instance import ServerGroup
from kvperf.server.replication import attach, wait_in_sync
from kvperf.server.resp import ConnectionLost, Endpoint, RespError
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")


@dataclass(frozen=True)
class DefinitionOptions:
    """Validated options of ``kvperf run --definitions`` (built by the CLI)."""

    results_dir: Path = Path("results")
    label: str | None = None
    server_bin: str | None = None
    kvload: Path | None = None  # kvload for memtier's front end (default: on PATH)
    profile: ProfileSettings | None = None  # --profile: perf record in the measure stage


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
    profile: ProfileSettings | None = None


@dataclass
class TestResult:
    plan: Plan
    row: Row
    kpis: tuple[KpiResult, ...] = ()


@dataclass
class DefinitionsSummary:
    results: list[TestResult] = field(default_factory=list)
    metrics_path: Path | None = None

    @property
    def rows(self) -> list[Row]:
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
    if not plan.clients:
        return "the definition has no client to run"
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
    check_settings(options.profile, client_mode=False)
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
                         options.results_dir / label, available_cpus(), found, options.profile)


def file_slug(text: str) -> str:
    """A name made safe for a file or directory name (at most 80 characters)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:80]


def definition_series(plan: Plan) -> GroupKey:
    """The series fields (describe_group's) a definition's test rows will have."""
    test = _test(plan)
    return (("command", test.name), ("data_size", None), ("pipeline", None),
            ("clients", None), ("io_threads", test.io_threads),
            ("cluster_mode", test.cluster), ("tls", False))


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
            self.persist(result)
            summary.results.append(result)
            self.observer.test_finished(plan, result)
        return summary

    def persist(self, result: TestResult) -> None:
        """The row to the database (when open) and to metrics.json, as soon as it exists."""
        if self.store is not None:
            self.store.record(result.row, self.metrics.path)
        self.metrics.append(result.row)

    def run_test(self, plan: Plan, position: int, run: int = 1) -> TestResult:
        log_dir = (self.run.out_dir / "tests" /
                   f"{position:04d}-{file_slug(plan.name)}-{file_slug(plan.topology.name)}")
        log_dir.mkdir(parents=True, exist_ok=True)
        work = TestRun(self.run, plan, log_dir, self.observer)
        try:
            self._on_server(work)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError, OSError) as exc:
            work.outcome.error = work.outcome.error or str(exc)
        if work.outcome.error:
            log.warning("%s on %s failed: %s", plan.name, plan.topology.name,
                        work.outcome.error)
        row = definition_row(replace(_test(plan), run=run), self.run.context, work.outcome,
                             work.details(), datetime.now(UTC).astimezone())
        return TestResult(plan, row, work.kpis)

    def _on_server(self, work: TestRun) -> None:
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
                log.info("%s on %s: server pids %s at %s", work.plan.name,
                         work.plan.topology.name, " ".join(map(str, group.pids)),
                         " ".join(map(str, group.endpoints)))
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


    def _start_replicas(self, work: TestRun, stack: contextlib.ExitStack[bool | None],
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
