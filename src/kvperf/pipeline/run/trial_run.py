"""The config matrix as units of work (``Matrix``, ``MatrixTrial``) and one trial's stages
against a target: seed → warmup → top-up → measure → checks.

Everything a trial proves about itself (hit ratio, pops really popped, the server executed
what the tool counted) is checked here; a failed check fails the trial with the reason.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kvperf.config.commands import POP_SEEDS, Seed, stored_as
from kvperf.core.cpus import format_cpu_list
from kvperf.core.errors import DriverError
from kvperf.core.kinds import Measure
from kvperf.driver.base import Driver, Measurement, Target
from kvperf.driver.kvload import first_error
from kvperf.driver.seed import KeyStore, ensure_pop_supply, seed_commands, seed_keyspace
from kvperf.pipeline.run import executed
from kvperf.pipeline.run.executed import Executed
from kvperf.pipeline.run.faults import RELAXED, FaultRun, fault_run
from kvperf.pipeline.run.instructions import counting, instruction_result, server_wrapping
from kvperf.pipeline.run.model import Bench, Prepared, Probe
from kvperf.pipeline.run.prepare import client_endpoint, client_mode
from kvperf.pipeline.run.profiling import profile_result, profiling
from kvperf.plan.trial import Trial
from kvperf.results.memory import memory_record
from kvperf.results.records import CommandCalls
from kvperf.results.row import (
    Details,
    Row,
    ServerSide,
    TrialOutcome,
    build_row,
    client_record,
    trial_series,
)
from kvperf.server.memory import MemoryInfo
from kvperf.server.replication import LagSamples, lag_sampling, wait_in_sync
from kvperf.server.resp import Endpoint
from kvperf.server.stats import with_replica_reads
from kvperf.store.files import write_json_atomic

MIN_HIT_RATIO = 0.9
MIN_EXECUTED_RATIO = 0.98
COLLECTION_SEEDS = frozenset({Seed.HASH_FIELDS, Seed.SET_MEMBERS, Seed.ZSET_MEMBERS})
SETTLE_SECONDS = 3.0  # at most, for used_memory to stop moving after seeding (rehashing)


def replica_groups(target: Target) -> list[tuple[Endpoint, list[Endpoint]]]:
    """Each primary with its replicas (ServerGroup lists primary i's replicas i-th)."""
    per = len(target.replicas) // len(target.endpoints)
    return [(p, list(target.replicas[i * per:(i + 1) * per]))
            for i, p in enumerate(target.endpoints)]


def _pop_target(trial: Trial) -> int:
    """Elements a pop command needs for the whole measure stage (plus the tool's overshoot)."""
    load = trial.load
    margin = load.clients * load.pipeline + 1000
    if load.requests is not None:
        return load.requests + margin
    per_second = min(200_000 * load.pipeline, 2_000_000)
    return int(per_second * (load.duration or 1)) + margin


@dataclass
class Matrix:
    """A prepared config matrix as a batch of units of work (pipeline/runner.Runner)."""

    prepared: Prepared

    @property
    def out_dir(self) -> Path:
        return self.prepared.out_dir

    @property
    def blocked(self) -> str | None:
        return self.prepared.blocked

    def works(self) -> list[MatrixTrial]:
        return [MatrixTrial(self.prepared, trial) for trial in self.prepared.trials]


@dataclass(frozen=True)
class MatrixTrial:
    """One trial of the config matrix as a unit of work: on fresh servers (or the running
    one in client mode), its stages (``TrialRun``), its row."""

    prepared: Prepared
    trial: Trial

    @property
    def identity(self) -> str:
        return self.trial.id

    @property
    def name(self) -> str:
        return f"trial {self.trial.index}"

    def describe(self) -> str:
        return self.trial.describe()

    @property
    def log_dir(self) -> Path:
        trial = self.trial
        return self.prepared.out_dir / "trials" / f"{trial.index:04d}-{trial.id}-r{trial.run}"

    @property
    def shared_server(self) -> None:
        return None

    def execute(self, bench: Bench) -> None:
        trial, options = self.trial, self.prepared.options
        work = TrialRun(self.prepared, trial, bench)
        client = format_cpu_list(trial.load.cpus) if trial.load.cpus else None
        if client_mode(options):
            target = Target((client_endpoint(options),), trial.server.cluster_mode,
                            options.tls_ca)
            bench.outcome.pinning = {"server": None, "client": client}
            work.run(target, [])
            return
        assert self.prepared.binary is not None
        tls = bench.tls_files() if trial.server.tls else None
        with bench.servers(self.prepared.binary, trial.server, tls, client,
                           **server_wrapping(options.measure, self.log_dir)) as group:
            target = Target(tuple(group.endpoints), trial.server.cluster_mode,
                            tls.ca if tls else None, tuple(group.replica_endpoints))
            if trial.load.faults:
                work.faults = fault_run(trial.load.faults, group, self.log_dir)
            try:
                work.run(target, group.pids)
            finally:
                if work.faults is not None:
                    work.faults.spare_killed()

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        return build_row(trial_series(self.trial), self.prepared.context, outcome, timestamp,
                         Details(client=client_record(outcome.measurement)))


@dataclass
class TrialRun:
    """Runs one trial's stages against a target; collects the outcome."""

    prepared: Prepared
    trial: Trial
    bench: Bench
    faults: FaultRun | None = None  # the trial's fault schedule (config "faults")
    # Per command of the load: calls, usec_per_call and the calls the tool's count implies.
    _commands: dict[str, Executed] = field(default_factory=dict, init=False)
    # The load's commands as the server answered them (error replies among its calls).
    _replies: executed.Replies = field(default_factory=lambda: executed.Replies(0, 0),
                                       init=False)

    @property
    def driver(self) -> Driver:
        return self.prepared.driver

    @property
    def outcome(self) -> TrialOutcome:
        return self.bench.outcome

    @property
    def probe(self) -> Probe:
        return self.bench.probe

    @property
    def log_dir(self) -> Path:
        return self.bench.work.log_dir

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return self.bench.stage(name)

    def run(self, target: Target, pids: list[int]) -> None:
        load = self.trial.load
        tool_log = self.log_dir / "tool.log"
        with self.probe.keyspace(target) as keyspace:
            empty = self.probe.memory(target.endpoints)
            if self.prepared.options.measure == Measure.MEMORY:
                self._memory_only(keyspace, target, empty)
                return
            self._seed(keyspace)
            self._meet("warmup")
            if load.warmup:
                with self.stage("warmup"):
                    self.driver.warmup(load, target, load.warmup, tool_log)
            before = self._top_up(keyspace)
            self._sync_replicas(target)
            seeded = self.probe.memory(target.endpoints)
            self._meet("measure")
            self.outcome.checks["measure_started_at"] = round(time.time(), 3)
            self.probe.reset_stats((*target.endpoints, *target.replicas))
            cpu_before = self.probe.cpu_seconds(pids)
            measure = self.prepared.options.measure
            with (counting(measure, pids, self.log_dir) as counted,
                  profiling(self.trial.profile or self.prepared.options.profile, pids,
                            self.log_dir) as profiled,
                  self._lag(target) as lag,
                  self.stage("measure")):
                self.outcome.measurement = self._measure(target, tool_log)
            self._keep_histograms()
            if self.faults is not None:
                self._after_faults(self.faults)
                return
            self._server_side(target, pids, cpu_before)
            self._record_lag(target, lag)
            self._record_memory(target, empty, seeded, sample=False)
            self.outcome.instructions = instruction_result(counted, self.trial, self.outcome,
                                                           self.prepared.out_dir)
            self.outcome.profile = profile_result(profiled, self.trial.describe(),
                                                  self.prepared.out_dir)
            self._check(keyspace, before)

    def _measure(self, target: Target, tool_log: Path) -> Measurement:
        """The load, under the trial's fault schedule when it has one."""
        def load() -> Measurement:
            return self.driver.measure(self.trial.load, target, tool_log)

        return self.faults.measure(load) if self.faults is not None else load()

    def _after_faults(self, faults: FaultRun) -> None:
        """The failover record; the checks that assume a healthy server are not made (a
        fault schedule killed, paused or demoted nodes on purpose)."""
        self.outcome.failover = faults.record()
        self.outcome.checks["relaxed_for_faults"] = list(RELAXED)

    def _sync_replicas(self, target: Target) -> None:
        """Every replica online at its primary's offset again after seeding (a read from a
        replica must find what the seed wrote)."""
        if not target.replicas:
            return
        with self.stage("replica_sync"):
            for primary, replicas in replica_groups(target):
                wait_in_sync(primary, len(replicas))

    def _lag(self, target: Target) -> contextlib.AbstractContextManager[LagSamples | None]:
        """Replication lag sampled through the measure stage when there are replicas."""
        if not target.replicas or self.faults is not None:  # a killed primary has no lag
            return contextlib.nullcontext()
        return lag_sampling(replica_groups(target))

    def _record_lag(self, target: Target, lag: LagSamples | None) -> None:
        """The row's ``server.replication_lag`` and where reads went."""
        if lag is None:
            return
        self.outcome.checks["replicas_in_sync"] = len(target.replicas)
        self.outcome.checks["read_from_replicas"] = self.trial.load.read_from_replicas
        self.outcome.server["replication_lag"] = lag.record()

    def _items(self, empty: MemoryInfo, after: MemoryInfo) -> int:
        """Keys (or a collection's members) the trial put in the server."""
        load = self.trial.load
        if load.command.seed in COLLECTION_SEEDS or self.prepared.options.measure == \
                Measure.MEMORY:
            return load.keyspacelen
        return after["keys"] - empty["keys"]

    def _record_memory(self, target: Target, empty: MemoryInfo | None,
                       seeded: MemoryInfo | None, sample: bool) -> None:
        """The row's memory object (none when the server could not be read)."""
        after = self.probe.memory(target.endpoints)
        if empty is None or after is None:
            return
        sizes = self.probe.memory_sample(target.endpoints) if sample else []
        self.outcome.memory = memory_record(empty, seeded, after, self._items(empty, after),
                                            sizes)

    def _memory_only(self, keyspace: KeyStore, target: Target,
                     empty: MemoryInfo | None) -> None:
        """--measure memory: seed ``keyspacelen`` keys (or members) of the command's type,
        let used_memory settle, read it and sample MEMORY USAGE; nothing is timed."""
        load = self.trial.load
        seed = stored_as(load.command.name, load.command.seed)
        data = b"x" * load.data_size
        with self.stage("seed"):
            if seed in POP_SEEDS:  # a list of keyspacelen elements
                commands = seed_commands(seed, 0, data, count=load.keyspacelen)
            else:
                commands = seed_commands(seed, load.keyspacelen, data,
                                         single_node=keyspace.nodes == 1)
            self.outcome.checks["seed_commands"] = keyspace.send_all(commands)
        with self.stage("settle"):
            self._settle(target)
        self.outcome.memory_only = True
        self._record_memory(target, empty, None, sample=True)
        if self.outcome.memory is None:
            raise DriverError("--measure memory: INFO memory could not be read")

    def _settle(self, target: Target) -> None:
        """Wait (≤ SETTLE_SECONDS) until used_memory reads the same twice 200 ms apart."""
        deadline = time.monotonic() + SETTLE_SECONDS
        last = None
        while time.monotonic() < deadline:
            info = self.probe.memory(target.endpoints)
            used = info["used_memory"] if info else None
            if used is not None and used == last:
                return
            last = used
            time.sleep(0.2)

    def _meet(self, stage: str) -> None:
        self.bench.meet(stage)

    def _keep_histograms(self) -> None:
        """Store the tool's HDR histograms beside the trial; the row names the file."""
        measurement = self.outcome.measurement
        histograms = measurement.extra.get("histograms") if measurement else None
        if histograms:
            path = self.log_dir / "histograms.json"
            write_json_atomic(path, histograms)
            self.outcome.histogram_file = str(path.relative_to(self.prepared.out_dir))

    def _seed(self, keyspace: KeyStore) -> None:
        load = self.trial.load
        seed = load.command.seed
        if seed is Seed.NONE or load.command.pops:
            return
        with self.stage("seed"):
            sent = seed_keyspace(keyspace, seed, load.keyspacelen, load.data_size,
                                 load.value_size)
        self.outcome.checks["seed_commands"] = sent

    def _top_up(self, keyspace: KeyStore) -> int | None:
        load = self.trial.load
        if not load.command.pops:
            return None
        with self.stage("seed"):
            return ensure_pop_supply(keyspace, load.command.seed, _pop_target(self.trial),
                                     load.data_size)

    def _server_side(self, target: Target, pids: list[int], cpu_before: float | None) -> None:
        measurement = self.outcome.measurement
        collected = self.probe.collect(target.endpoints)
        command = self.trial.load.command
        if target.replicas and command.reads:  # a read's calls on replicas (none with "no")
            collected = with_replica_reads(collected, self.probe.collect(target.replicas),
                                           set(command.calls_per_sequence))
        requests = measurement.requests if measurement else None
        commands = executed.per_command(self.trial.load.command,
                                        collected.get("commandstats", {}), requests)
        calls, usec_per_call = executed.totals(commands)
        server = ServerSide(calls=calls if collected else None, usec_per_call=usec_per_call,
                            keyspace_hits=collected.get("keyspace_hits"),
                            keyspace_misses=collected.get("keyspace_misses"),
                            monotonic_clock=collected.get("monotonic_clock"))
        if self.trial.load.command.is_sequence and collected:
            server["commands"] = {n: CommandCalls(**e) for n, e in commands.items()}
        if len(collected.get("node_calls", [])) > 1:
            server["calls_per_node"] = [executed.node_total(self.trial.load.command, node)
                                        for node in collected["node_calls"]]
        cpu_after = self.probe.cpu_seconds(pids)
        if cpu_before is not None and cpu_after is not None and measurement:
            cpu = cpu_after - cpu_before
            server["cpu_seconds"] = round(cpu, 3)
            if requests or calls:
                server["cpu_us_per_request"] = round(cpu / (requests or calls) * 1e6, 4)
        self.outcome.server = server
        self._commands = commands if collected else {}
        self._replies = executed.replies(self.trial.load.command.calls_per_sequence,
                                         collected.get("commandstats", {}),
                                         collected.get("errorstats", {}))

    def _check(self, keyspace: KeyStore, before: int | None) -> None:
        self._check_executed()
        load = self.trial.load
        if before is not None:
            left = keyspace.count(load.command.seed)
            self.outcome.checks.update({"pop_supply": before, "popped": before - left,
                                        "left": left})
            if left == 0:
                raise DriverError(f"{load.command.name} emptied its key during the measure "
                                  "stage: pops of an empty key were measured")
        hits = self.outcome.server.get("keyspace_hits") or 0
        misses = self.outcome.server.get("keyspace_misses") or 0
        if load.command.seed is not Seed.NONE and not load.command.pops and hits + misses:
            ratio = hits / (hits + misses)
            self.outcome.checks["hit_ratio"] = round(ratio, 4)
            if ratio < MIN_HIT_RATIO:
                raise DriverError(f"only {ratio:.0%} of {load.command.name} reads found "
                                  "their key: the measurement would be of misses")


    def _check_executed(self) -> None:
        """The server must have answered (nearly) no request with an error, and executed
        (nearly) every request the tool counted, per command of the load (a mix's GETs and
        SETs each)."""
        if self._replies.errors:
            self.outcome.checks["error_replies"] = self._replies.errors
        problem = executed.error_verdict(self._replies, first_error([self.log_dir /
                                                                     "tool.log"]))
        if problem:
            raise DriverError(problem)
        ratio = executed.executed_ratio(self._commands)
        if ratio is None:
            return
        self.outcome.checks["executed_ratio"] = ratio
        problem = executed.shortfall(self._commands, MIN_EXECUTED_RATIO)
        if problem:
            raise DriverError(problem)
