"""A definition's test as a unit of work (pipeline/runner.Runner): a fresh server of the
plan's configuration (its dataset loaded, pinned as the topology allows), replicas,
preload, init, keyspace check, background save, the clients, then what the results say
(row metrics, exporter metrics, KPIs) and what the server executed (INFO commandstats, the
command mix). ``DefinitionRun``: a side's prepared plans as a batch of such works.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from kvperf.config.model import ProfileSettings
from kvperf.core.errors import DriverError, ServerError
from kvperf.core.identity import stable_id
from kvperf.core.jsontypes import JsonObject
from kvperf.definitions import memtier as memtier_args
from kvperf.definitions import pubsub as pubsub_args
from kvperf.definitions.client import MEMTIER, ClientPlan
from kvperf.definitions.exporter import evaluate
from kvperf.definitions.kpis import KpiResult, check_all
from kvperf.definitions.plan import Plan
from kvperf.definitions.snapshot import reuse_refusal, run_order
from kvperf.driver.base import Measurement
from kvperf.driver.benchmark_run import BenchmarkToolRun, suite_mix
from kvperf.driver.benchmark_run import command_mix as benchmark_mix
from kvperf.driver.benchmark_run import measurement as benchmark_measurement
from kvperf.driver.kvload import first_error
from kvperf.driver.memtier import MemtierDriver, measurement
from kvperf.driver.pubsub import (
    is_pubsub_report,
    kvload_path,
    run_pubsub,
    with_publisher_totals,
)
from kvperf.driver.pubsub import measurement as pubsub_measurement
from kvperf.pipeline.run import definition_snapshot as snapshots
from kvperf.pipeline.run import executed
from kvperf.pipeline.run.definition_snapshot import LOAD_TIMEOUT, PreloadState
from kvperf.pipeline.run.model import Bench, OnBench
from kvperf.pipeline.run.profiling import profile_result, profiling
from kvperf.pipeline.world import ServerHandle
from kvperf.plan.trial import ServerSetup
from kvperf.results.records import DefinitionRecord, KpiRecord, MixShare
from kvperf.results.row import (
    DefinitionTest,
    Details,
    Row,
    RunContext,
    TrialOutcome,
    build_row,
    client_record,
)
from kvperf.server.binary import ServerBinary
from kvperf.server.process import wait_until
from kvperf.server.replication import (
    attach,
    carries_replication_id,
    lag_sampling,
    sync_at_once,
    sync_kind,
    wait_in_sync,
)
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError
from kvperf.server.stats import CommandStat, changes_since_save
from kvperf.store.snapshots import Snapshot, SnapshotCache, link_into

log = logging.getLogger("kvperf")
TOOL_GRACE = 120.0  # seconds a memtier run may take beyond its --test-time
BENCHMARK_TIMEOUT = 900.0  # a request-bound redis-/valkey-benchmark run
BGSAVE_TIMEOUT = 600.0  # wait_for_bgsave: a background save still running before measuring


@dataclass
class DefinitionRun:
    """A side's definitions, everything decided before the first server starts; a batch
    of ``DefinitionWork`` (``rounds`` times every plan, round after round)."""

    plans: tuple[Plan, ...]
    refused: tuple[tuple[Plan, str], ...]  # plans this stage cannot run, with the reason
    driver: MemtierDriver
    binary: ServerBinary
    context: RunContext
    out_dir: Path
    cpus: set[int]  # the CPUs kvperf may use (pinning() divides them per test)
    benchmark_tools: dict[str, BenchmarkToolRun] = field(default_factory=dict)
    profile: ProfileSettings | None = None
    rounds: int = 1
    kvload: Path | None = None  # kvload for pub/sub definitions (default: on PATH)
    snapshots: SnapshotCache | None = None  # None: every preload runs for real
    reuse: bool = False  # keep a server whose data a test left unchanged for the next test

    @property
    def order(self) -> tuple[Plan, ...]:
        """The plans in the order they run: those that may share a server side by side
        when servers are reused (definitions/snapshot.run_order)."""
        return run_order(self.plans) if self.reuse else self.plans

    @property
    def blocked(self) -> str | None:
        return None

    def works(self) -> list[DefinitionWork]:
        order = self.order
        return [DefinitionWork(self, plan, (round_ - 1) * len(order) + i, round_)
                for round_ in range(1, self.rounds + 1)
                for i, plan in enumerate(order, 1)]


def _nothing() -> None:
    pass


def file_slug(text: str) -> str:
    """A name made safe for a file or directory name (at most 80 characters)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:80]


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


def definition_test(plan: Plan, run: int = 1) -> DefinitionTest:
    """The series fields of a plan's rows."""
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
                          plan.topology.cluster, run)


@dataclass
class DefinitionWork(OnBench):
    """One definition's test (one round of it) on fresh servers; what it measured."""

    run: DefinitionRun
    plan: Plan
    position: int
    round: int = 1
    kpis: tuple[KpiResult, ...] = ()
    metrics: dict[str, float | None] = field(default_factory=dict)
    mix: dict[str, MixShare] = field(default_factory=dict)
    tests: dict[str, dict[str, float]] = field(default_factory=dict)  # a suite's, by test
    suite: dict[str, float] | None = None  # the command mix of the suite's tests
    client_cpus: tuple[int, ...] | None = None
    bench: Bench | None = None
    # Each primary with its replicas (the replication lag sampled in the measure stage).
    replica_groups: list[tuple[Endpoint, list[Endpoint]]] = field(default_factory=list)
    preload: PreloadState = field(default_factory=PreloadState)

    @property
    def identity(self) -> str:
        return definition_test(self.plan).trial_id

    @property
    def name(self) -> str:
        return f"{self.plan.name} on {self.plan.topology.name}"

    def describe(self) -> str:
        return f"{self.plan.name} [{self.plan.topology.name}]"

    @property
    def log_dir(self) -> Path:
        return (self.run.out_dir / "tests" / f"{self.position:04d}-{file_slug(self.plan.name)}"
                f"-{file_slug(self.plan.topology.name)}")

    @property
    def shared_server(self) -> None:
        return None

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        details = Details(definition=self.details())
        measured = outcome.measurement
        if measured is not None and "pubsub" in measured.extra:  # kvload's own view
            details["client"] = client_record(measured)
        return build_row(definition_test(self.plan, self.round).series(), self.run.context,
                         outcome, timestamp, details)

    def details(self) -> DefinitionRecord:
        record = self._record()
        if self.tests:
            record["tests"] = self.tests
        if self.plan.preload is not None:
            record["preload"] = self.preload.record()
        if self.run.reuse:
            record["server_reused"] = self.preload.reused_from is not None
        return record

    def _record(self) -> DefinitionRecord:
        return {"name": self.plan.name, "file": str(self.plan.definition.source),
                "topology": self.plan.topology.name,
                "override_test_time": self.plan.test_time_override,
                "metrics": self.metrics, "command_mix": self.mix,
                "kpis": [KpiRecord(kpi=k.kpi.describe(), mode=k.kpi.mode, path=k.kpi.path,
                                   bound=k.kpi.bound, value=k.value, passed=k.passed,
                                   reason=k.reason) for k in self.kpis],
                "tools": [self._tool(c) for c in self.plan.clients],
                "notes": list(self.plan.notes),
                "tested_groups": list(self.plan.definition.tested_groups)}

    def execute(self, bench: Bench) -> None:
        self.bench = bench
        server_cpus, self.client_cpus, note = pinning(self.plan.topology.io_threads,
                                                      self.run.cpus)
        if note:
            bench.outcome.checks["pinning"] = note
        self.preload = snapshots.plan_preload(self.plan, self.run.snapshots, self.run.binary,
                                              self.run.driver.name)
        bench.reuse_key = self._reuse_key(server_cpus)
        left_by = bench.kept_by(bench.reuse_key)
        if left_by is not None:
            if self.preload.snapshot is not None and self._on_kept(left_by, server_cpus):
                return
            bench.kept_by(None)  # stopped: this test starts its own
        if self.preload.snapshot is not None and self._from_snapshot(self.preload.snapshot,
                                                                     server_cpus):
            return
        with _dataset_dir(self.plan) as data:
            self._on_servers(_server_setup(self.plan, server_cpus, data), server_cpus)

    def _on_servers(self, setup: ServerSetup, server_cpus: tuple[int, ...] | None,
                    loaded: Snapshot | None = None, cleanup: Callable[[], None] = _nothing
                    ) -> None:
        """The test on fresh servers (started from ``loaded`` when given); ``cleanup``
        once they stop, when they are kept for the next test (``_offer``)."""
        assert self.bench is not None
        with (self.bench.servers(self.run.binary, setup, None, _cpus_text(self.client_cpus),
                                 **({"ready_timeout": LOAD_TIMEOUT} if loaded else {})
                                 ) as group,
              contextlib.ExitStack() as replicas):  # stopped before the primary
            if loaded is None or self._loaded(group, loaded):
                self._stages(group, replicas, server_cpus, loaded is not None)
                self._offer(tuple(group.endpoints), cleanup)

    def _reuse_key(self, server_cpus: tuple[int, ...] | None) -> str | None:
        """What a server kept between tests must share with this one — the dataset
        identity (its snapshot key), the server binary, its whole start (configuration,
        io-threads, pinning) and topology — or None when this test gets a fresh server
        (the log says why)."""
        key = self.preload.key
        if not self.run.reuse or key is None:
            return None
        refused = reuse_refusal(self.plan)
        if refused is not None:
            log.info("%s: a fresh server, none kept: %s", self.name, refused)
            return None
        return repr((key.id, str(self.run.binary.path),
                     _server_setup(self.plan, server_cpus, None), self.plan.topology))

    def _on_kept(self, left_by: str, server_cpus: tuple[int, ...] | None) -> bool:
        """The test on the server ``left_by`` kept — no start, no load — when it still
        holds the snapshot's data (no write since, DBSIZE and the sampled keys as the
        snapshot recorded them); else False: it is stopped, and the caller starts one."""
        assert self.bench is not None and self.preload.snapshot is not None
        setup = _server_setup(self.plan, server_cpus, None)
        with (self.bench.servers(self.run.binary, setup, None, _cpus_text(self.client_cpus)
                                 ) as group,
              contextlib.ExitStack() as replicas):
            endpoints = tuple(group.endpoints)
            with self.stage("snapshot_check"):
                problem = self._changed(endpoints, self.preload.snapshot, sample=True)
            if problem is not None:
                log.info("%s: server of %s not reused: %s", self.name, left_by, problem)
                return False
            self.preload.source, self.preload.reused_from = "reused", left_by
            self.preload.seconds = self.outcome.stage_seconds["snapshot_check"]
            log.info("%s: server reused from %s (dataset unchanged)", self.name, left_by)
            self._stages(group, replicas, server_cpus, True)
            self._offer(endpoints, _nothing)
        return True

    def _changed(self, endpoints: tuple[Endpoint, ...], snapshot: Snapshot | None,
                 sample: bool = False) -> str | None:
        """How the server's data may differ from ``snapshot``'s, or None — as the server
        proves it: no write since it loaded or saved the snapshot (INFO persistence's
        rdb_changes_since_last_save 0), its DBSIZE, and (``sample``) the sampled keys."""
        assert self.bench is not None
        if snapshot is None:
            return "no snapshot in the cache to check its data against"
        try:
            changes = changes_since_save(endpoints[0])
            if changes < 0:
                return "the server does not report rdb_changes_since_last_save"
            if changes:
                return f"the dataset changed ({changes} writes since the snapshot)"
            keys = self.bench.probe.keys(endpoints)
            if not sample:
                expected = snapshot.record["dbsize"]
                return None if keys == expected else (
                    f"DBSIZE {keys}, the snapshot holds {expected}")
            return snapshots.mismatch(snapshot, endpoints[0], keys)
        except (RespError, ConnectionLost, OSError) as exc:
            return f"reading the server failed: {exc}"

    def _offer(self, endpoints: tuple[Endpoint, ...], cleanup: Callable[[], None]) -> None:
        """Keep the server for the next test (Runner) when this one left its data as it
        found it; else the log says why not."""
        assert self.bench is not None
        key = self.preload.key
        if self.bench.reuse_key is None or key is None or self.run.snapshots is None:
            return
        why = ("its init commands ran on it" if self.plan.init_commands or self.plan.init_lua
               else self._changed(endpoints, self.preload.snapshot
                                  or self.run.snapshots.find(key.id)))
        if why is not None:
            log.info("%s: server not kept for the next test: %s", self.name, why)
            return
        self.bench.keep = cleanup

    def _from_snapshot(self, snapshot: Snapshot, server_cpus: tuple[int, ...] | None
                       ) -> bool:
        """The test on a server started from ``snapshot``; False when it was unusable
        (the caller preloads for real)."""
        assert self.run.snapshots is not None
        directory = Path(tempfile.mkdtemp(prefix="kvperf-snapshot-"))
        remove = functools.partial(shutil.rmtree, directory, ignore_errors=True)
        try:
            link_into(snapshot, directory)
            self._on_servers(_server_setup(self.plan, server_cpus, directory), server_cpus,
                             snapshot, remove)
        except ServerError as exc:  # it did not start: the file would not load
            snapshots.unloadable(self.preload, self.run.snapshots, exc, self.name)
            self.outcome.error = None
            return False
        finally:
            if self.bench is None or self.bench.keep is None:  # else once the server stops
                remove()
        return self.preload.source == "snapshot"

    def _loaded(self, group: ServerHandle, snapshot: Snapshot) -> bool:
        """Whether the started server holds the snapshot's data (else it is stopped and
        the test preloads for real)."""
        assert self.bench is not None and self.run.snapshots is not None
        endpoints = tuple(group.endpoints)
        with self.stage("snapshot_check"):
            keys = self.bench.probe.keys(endpoints)
            if not snapshots.verified(self.preload, self.run.snapshots, endpoints[0], keys,
                                      self.name):
                return False
        self.preload.source = "snapshot"
        self.preload.seconds = (self.outcome.stage_seconds.get("server_start", 0.0)
                                + self.outcome.stage_seconds.get("snapshot_check", 0.0))
        log.info("%s: snapshot %s loaded (%d keys) in %.1fs; preload skipped", self.name,
                 snapshot.id, keys, self.preload.seconds)
        return True

    def _start_replicas(self, stack: contextlib.ExitStack[bool | None],
                        cpus: tuple[int, ...] | None, primary: Endpoint) -> None:
        """The topology's replicas of ``primary``, in sync, stopped with it (``stack``):
        fresh servers attached by REPLICAOF (a full sync), or, when the primary started
        from a snapshot whose RDB carries a replication id, servers started from that RDB
        as its replicas (a partial resync: nothing copied). The check ``replica_sync``
        and the log say which."""
        assert self.bench is not None
        count = self.plan.topology.replicas
        loaded = self.preload.snapshot if self.preload.source == "snapshot" else None
        same = loaded if loaded and carries_replication_id(loaded.rdb) else None
        with self.stage("replicas"), sync_at_once(primary):
            started = [self._replica(stack, cpus, primary, i, same) for i in range(count)]
            wait_in_sync(primary, count)
        kind = sync_kind(primary, count)
        self.outcome.checks["replicas_in_sync"] = count
        self.outcome.checks["replica_sync"] = kind
        if loaded is not None:
            log.info("%s: %d replica(s) in sync by a %s sync%s", self.name, count, kind,
                     f" from snapshot {loaded.id}" if same else
                     f" (snapshot {loaded.id} carries no replication id)")
        self.replica_groups = [(primary, started)]

    def _replica(self, stack: contextlib.ExitStack[bool | None],
                 cpus: tuple[int, ...] | None, primary: Endpoint, i: int,
                 snapshot: Snapshot | None) -> Endpoint:
        """Replica ``i``: fresh and attached, or loading ``snapshot`` as ``primary``'s."""
        assert self.bench is not None
        data = None
        if snapshot is not None:
            data = Path(tempfile.mkdtemp(prefix="kvperf-replica-"))
            stack.callback(shutil.rmtree, data, ignore_errors=True)
            link_into(snapshot, data)
        setup = _server_setup(self.plan, cpus, data)
        if data is not None:
            setup = replace(setup, custom_configs=(
                *setup.custom_configs, ("replicaof", f"{primary.host} {primary.port}")))
        replica = self.bench.launcher(self.run.binary, setup, self.log_dir, None,
                                      log_prefix=f"replica{i}",
                                      **({"ready_timeout": LOAD_TIMEOUT} if data else {}))
        stack.enter_context(replica)
        if data is None:
            attach(replica.endpoints[0], primary)
        return replica.endpoints[0]

    def _tool(self, client: ClientPlan) -> str:
        if client.tool == MEMTIER:
            return f"{self.run.driver.name} {self.run.driver.version}"
        if client.tool == pubsub_args.PUBSUB:
            return client.tool
        found = self.run.benchmark_tools.get(client.tool)
        return f"{client.tool} {found.version}" if found else client.tool

    def _memtier(self, runs: list[tuple[ClientPlan, Path]], endpoint: Endpoint
                 ) -> list[JsonObject]:
        longest = max((c.test_time or 0) for c, _ in runs)
        return self.run.driver.run([(c.argv, out) for c, out in runs], endpoint,
                                   self.log_dir / "tool.log", self.client_cpus,
                                   longest + TOOL_GRACE + (0 if longest else 600),
                                   self.plan.topology.cluster)

    def _stages(self, group: ServerHandle, stack: contextlib.ExitStack[bool | None],
                server_cpus: tuple[int, ...] | None, loaded: bool = False) -> None:
        assert self.bench is not None
        endpoints, pids, probe = tuple(group.endpoints), group.pids, self.bench.probe
        replicas = self.plan.topology.replicas
        cluster = self.plan.topology.cluster  # its replicas started with its primaries
        if cluster and replicas:
            theirs = group.replica_endpoints
            self.replica_groups = [(p, theirs[i * replicas:(i + 1) * replicas])
                                   for i, p in enumerate(endpoints)]
        if replicas and not cluster and not self.plan.replica_after_preload:
            self._start_replicas(stack, server_cpus, endpoints[0])
        if self.plan.preload is not None and not loaded:
            self._preload(endpoints)
        if self.plan.replica_after_preload:
            self._start_replicas(stack, server_cpus, endpoints[0])
        with self.stage("init"):
            _init(endpoints, self.plan)
        self._check_keyspace(endpoints)
        if self.plan.definition.dbconfig.wait_for_bgsave:
            with self.stage("bgsave"):
                if not wait_until(lambda: not probe.saving(endpoints),
                                  BGSAVE_TIMEOUT, interval=0.2):
                    raise DriverError(f"a BGSAVE still runs after {BGSAVE_TIMEOUT:.0f}s")
        if self.plan.save_first or self.plan.flush_first:
            with self.stage("save"):
                _save_and_flush(endpoints, self.plan)
        if replicas:
            with self.stage("replica_sync"):
                for primary in endpoints:
                    wait_in_sync(primary, replicas)
            self.outcome.checks["replicas_in_sync"] = replicas * len(endpoints)
        probe.reset_stats(endpoints)
        cpu_before = probe.cpu_seconds(pids)
        with (profiling(self.run.profile, pids, self.log_dir) as profiled,
              (lag_sampling(self.replica_groups) if self.replica_groups
               else contextlib.nullcontext()) as lag,
              self.stage("measure")):
            documents = self._clients(endpoints[0])
        self.outcome.profile = profile_result(
            profiled, f"{self.plan.name} [{self.plan.topology.name}]", self.run.out_dir)
        self._results(documents)
        self._server_side(endpoints, pids, cpu_before)
        if lag is not None:
            self.outcome.server["replication_lag"] = lag.record()
        self._check_reloaded(endpoints)

    def _preload(self, endpoints: tuple[Endpoint, ...]) -> None:
        """The preload run for real, then saved into the snapshot cache when it may be."""
        assert self.bench is not None and self.plan.preload is not None
        with self.stage("preload"):
            self._memtier([(self.plan.preload, self.log_dir / "preload.json")], endpoints[0])
        self.preload.seconds = self.outcome.stage_seconds.get("preload")
        if self.preload.key is not None and self.run.snapshots is not None:
            with self.stage("snapshot_save"):
                snapshots.save(self.preload, self.run.snapshots, endpoints[0],
                               self.bench.probe.keys(endpoints), self.name)
        if self.preload.saved is None:
            log.info("%s: preloaded in %.1fs (%s)", self.name, self.preload.seconds or 0.0,
                     self.preload.why or "no snapshot saved")

    def _check_reloaded(self, endpoints: tuple[Endpoint, ...]) -> None:
        """``rdb_checks`` operation ``load``: the keys its reload must have brought back."""
        assert self.bench is not None
        checks = self.plan.definition.dbconfig.rdb_checks
        if checks is None or checks.operation != "load" or checks.keyspacelen is None:
            return
        keys = self.bench.probe.keys(endpoints)
        self.outcome.checks["rdb_checks_keyspacelen"] = keys
        if keys != checks.keyspacelen:
            raise DriverError(f"rdb_checks: the reload should leave {checks.keyspacelen} keys, "
                              f"the server holds {keys} (DBSIZE) after measuring")

    def _clients(self, endpoint: Endpoint) -> list[JsonObject]:
        clients = self.plan.clients
        if clients and clients[0].tool == pubsub_args.PUBSUB:  # alone (plan.py made it so)
            timeout = (clients[0].test_time or 0) + pubsub_args.DRAIN_S + TOOL_GRACE
            return [run_pubsub(kvload_path(self.run.kvload), clients[0].argv, endpoint,
                               self.log_dir / "client-0.json", self.log_dir / "tool-0.log",
                               self.client_cpus, timeout)]
        if clients and clients[0].tool != MEMTIER:  # alone (unsupported() checked)
            tool = self.run.benchmark_tools[clients[0].tool]
            return [tool.run(clients[0].argv, endpoint, self.log_dir / "tool.log",
                             self.client_cpus, BENCHMARK_TIMEOUT, self.plan.topology.cluster)]
        return self._memtier([(c, self.log_dir / f"client-{i}.json")
                              for i, c in enumerate(clients)], endpoint)

    def _check_keyspace(self, endpoints: tuple[Endpoint, ...]) -> None:
        assert self.bench is not None
        keys = self.bench.probe.keys(endpoints)
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

    def _results(self, documents: list[JsonObject]) -> None:
        measure = (measurement if "ALL STATS" in documents[0] else pubsub_measurement
                   if is_pubsub_report(documents[0]) else benchmark_measurement)
        first = measure(documents[0])
        if len(documents) > 1:  # several clients at once: their throughputs add up
            first = replace(first, rps=sum(measure(d).rps for d in documents))
            self.outcome.checks["clients"] = len(documents)
        self.outcome.measurement = first
        if measure is benchmark_measurement:
            self.suite = suite_mix(documents[0])
            if self.suite is not None:
                self.tests = documents[0]["Tests"]
        exported = (with_publisher_totals(documents[0]) if measure is pubsub_measurement
                    else documents[0])
        self.metrics = {m.name: m.value for m in evaluate(self.plan.metrics, exported)}
        self.kpis = check_all(self.plan.kpis, exported)

    def _server_side(self, endpoints: tuple[Endpoint, ...], pids: list[int],
                     before: float | None) -> None:
        assert self.bench is not None
        probe = self.bench.probe
        collected = probe.collect(endpoints)
        stats = collected.get("commandstats", {})
        expected = self.suite or _expected_mix(self.plan.clients)
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
        after = probe.cpu_seconds(pids)
        if before is not None and after is not None:
            self.outcome.server["cpu_seconds"] = round(after - before, 3)
        self._judge(expected, calls, executed.replies(expected, stats,
                                                      collected.get("errorstats", {})))

    def _judge(self, expected: dict[str, float], calls: dict[str, int],
               found: executed.Replies) -> None:
        """Fail a test whose load mostly got error replies, whose command the server lacks,
        or whose clients completed nothing."""
        self._check_replies(found)
        missing = [name.upper() for name, share in expected.items() if share and not calls[name]]
        if missing and not found.errors and not found.prefixes:  # never sent
            raise DriverError(_unsent(missing, self.plan.clients, self.outcome.measurement))
        if missing:  # every such request got an error reply (an unknown command, say)
            raise DriverError(f"the server executed no {', '.join(missing)} call while the "
                              f"clients ran (error replies; see {self.log_dir.name}/tool-*.log)"
                              f": does this server have {'them' if len(missing) > 1 else 'it'}?")
        measured = self.outcome.measurement
        if measured is not None and (measured.rps <= 0 or measured.requests == 0):
            raise DriverError("the clients completed no operation (0 ops/s) and the server "
                              f"answered no error: see {self.log_dir.name}/tool-*.log")

    def _check_replies(self, found: executed.Replies) -> None:
        """Fail a test whose load mostly got error replies (executed.error_verdict)."""
        if found.errors:
            self.outcome.checks["error_replies"] = found.errors
        problem = executed.error_verdict(found, first_error(self.log_dir.glob("tool-*.log")))
        if problem:
            raise DriverError(problem)


ERROR_REPLIES = re.compile(r"WARNING: (?P<count>\d+) error replies")  # kvload memtier's log


def _calls(name: str, stats: dict[str, CommandStat]) -> int:
    return sum(s["calls"] for n, s in stats.items() if n == name or n.startswith(name + "|"))


def _client_mix(client: ClientPlan) -> dict[str, float]:
    if client.tool == MEMTIER:
        return memtier_args.command_mix(memtier_args.parse(list(client.argv)))
    if client.tool == pubsub_args.PUBSUB:
        return pubsub_args.mix(client.argv)
    return benchmark_mix(client.argv)


def _paced_rate(client: ClientPlan) -> float | None:
    """Requests per second a memtier client is paced at (``--rate-limiting`` per connection
    × ``-c`` × ``-t``, memtier's defaults 50 and 4), or None when it runs closed-loop."""
    if client.tool != MEMTIER:
        return None
    options = memtier_args.parse(list(client.argv))
    rate = memtier_args.value(options, "rate-limiting")
    if not rate:
        return None
    return float(rate) * memtier_args.connections(options)


def _unsent(missing: list[str], clients: tuple[ClientPlan, ...],
            measured: Measurement | None) -> str:
    """Why the clients sent none of ``missing`` although the server answered no error: a
    memtier run shorter than one rotation per connection (each command its ratio of times in
    a row) never reaches its last commands."""
    names = ", ".join(missing)
    said = f"the clients sent no {names} while they ran and the server answered no error"
    memtier = [memtier_args.parse(list(c.argv)) for c in clients if c.tool == MEMTIER]
    if not memtier or measured is None or not measured.requests:
        return said
    rotation = max(memtier_args.rotation_length(o) for o in memtier)
    conns = sum(memtier_args.connections(o) for o in memtier)
    return (f"{said}: memtier sends each --command its --command-ratio of times in a row on "
            f"every connection, and {measured.requests:,} requests over {conns:,} connections "
            f"({measured.requests / conns:,.0f} each) did not finish one rotation of "
            f"{rotation:,}: give the test more time (--override-test-time)")


def _expected_mix(clients: tuple[ClientPlan, ...]) -> dict[str, float]:
    """The clients' command mix (shares summing to 1): each client weighted by the rate it
    is paced at when every client is paced (a 2,000-connection PING keepalive beside one
    CLIENT LIST prober sends 99.5% PINGs), else equally (closed-loop clients' rates depend on
    the server)."""
    rates = [_paced_rate(c) for c in clients]
    weights = ([r for r in rates if r is not None] if all(rates)
               else [1.0] * len(clients))
    total = sum(weights)
    out: dict[str, float] = {}
    for client, weight in zip(clients, weights, strict=True):
        for name, share in _client_mix(client).items():
            out[name] = out.get(name, 0.0) + share * weight / total
    return out


def _answer(client: RespClient, command: tuple[str, ...]) -> object:
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
    answers: dict[str, list[object]] = {what: [] for what, _ in calls}
    for endpoint in endpoints:
        with RespClient(endpoint, timeout=60) as client:
            for what, command in calls:
                answers[what].append(_answer(client, command))
    for what, replies in answers.items():
        if all(isinstance(reply, RespError) for reply in replies):
            raise DriverError(f"{what}: the server answered {replies[0]}")


def _save_and_flush(endpoints: tuple[Endpoint, ...], plan: Plan) -> None:
    """SAVE (the dataset written where the server reloads it from), then FLUSHALL SYNC
    when the plan says so (definitions/plan.disk_steps), on every node."""
    steps = ([("SAVE",)] if plan.save_first else []) + (
        [("FLUSHALL", "SYNC")] if plan.flush_first else [])
    for endpoint in endpoints:
        with RespClient(endpoint, timeout=BGSAVE_TIMEOUT) as client:
            for command in steps:
                reply = _answer(client, command)
                if isinstance(reply, RespError):
                    raise DriverError(f"{' '.join(command)} before measuring: the server "
                                      f"answered {reply}")


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
                       topology.primaries, cpus, config, (), (),
                       topology.replicas if topology.cluster else 0)
