"""Trace replay as a kind of work (issue 27; docs/TRACES.md): ``kvperf run --trace TRACE``.
Each run (``--runs N``) is a unit of work of the one runner (pipeline/run/runner.Runner): a
fresh server, ``kvload replay`` of the trace against it (open loop at the trace's times /
speed, or closed loop at ``max``), then what the server executed (INFO commandstats,
DBSIZE). The trial identity is the trace's sha256 with the replay's speed and seeding, so
rows of the same trace form one series whatever the file is called, and verdicts, history
and reports work on them as on any trial."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kvperf.core.errors import UsageError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.driver.base import Target
from kvperf.driver.kvload import Kvload
from kvperf.driver.registry import find_tool
from kvperf.driver.trace_replay import TraceFile, check_speed, check_trace, run_replay
from kvperf.pipeline.request.common import StoreRequest
from kvperf.pipeline.request.options import InterferencePolicy, TraceOptions
from kvperf.pipeline.run.definition_work import pinning
from kvperf.pipeline.run.logs import log_to
from kvperf.pipeline.run.model import Bench, Observer, OnBench, RunSummary
from kvperf.pipeline.run.prepare import validate_label
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.run.storage import Persisted, execute_persisting
from kvperf.pipeline.world import World
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import (
    Details,
    Row,
    RunContext,
    Series,
    TrialOutcome,
    build_row,
    client_record,
)
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts

log = logging.getLogger("kvperf")


@dataclass
class TraceRun:
    """Everything decided before the first server starts; a batch of ``TraceWork``."""

    options: TraceOptions
    kvload: Path
    trace: TraceFile
    binary: ServerBinary
    context: RunContext
    out_dir: Path
    server_cpus: tuple[int, ...] | None
    client_cpus: tuple[int, ...] | None

    @property
    def blocked(self) -> str | None:
        return None

    def works(self) -> list[TraceWork]:
        return [TraceWork(self, run) for run in range(1, self.options.runs + 1)]


def prepare_trace(options: TraceOptions) -> TraceRun:
    """kvload, the trace (checked: a bad one exits 2 with its byte offset), the server."""
    if options.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {options.runs}")
    check_speed(options.replay.speed)
    kvload = find_tool("kvload", None, None)
    if kvload is None:
        raise UsageError("--trace needs kvload (install kvperf with its kvload binary)")
    driver = Kvload.probe(kvload)
    binary = resolve(options.server_bin)
    label = validate_label(options.label or binary.label)
    out_dir = options.results_dir / label
    out_dir.mkdir(parents=True, exist_ok=True)
    trace = check_trace(kvload, options.trace, out_dir / "trace-info.log")
    server, client, _ = pinning(1, available_cpus())
    env = {**host_facts(), "tool": f"kvload {driver.version}",
           "server_binary": str(binary.path), "server_source": binary.source}
    context = RunContext(label, None, "kvload", driver.version, binary.label, env,
                         Measure.TIMING)
    return TraceRun(options, kvload, trace, binary, context, out_dir, server, client)


@dataclass
class TraceWork(OnBench):
    """One replay of the trace on a fresh server; what it measured."""

    run: TraceRun
    number: int
    bench: Bench | None = None

    @property
    def identity(self) -> str:
        replay = self.run.options.replay
        return stable_id({"trace_sha256": self.run.trace.sha256, "speed": replay.speed,
                          "seed_from_trace": replay.seed})

    @property
    def name(self) -> str:
        return (f"replay {self.run.trace.path.name} on {self.run.context.label} "
                f"(run {self.number})")

    def describe(self) -> str:
        replay = self.run.options.replay
        return (f"trace {self.run.trace.path} sha256 {self.run.trace.sha256[:12]} "
                f"speed {replay.speed}{' seeded' if replay.seed else ''}")

    @property
    def log_dir(self) -> Path:
        return self.run.out_dir / "replays" / f"{self.number:04d}"

    @property
    def shared_server(self) -> None:
        return None

    def execute(self, bench: Bench) -> None:
        self.bench = bench
        setup = ServerSetup(False, False, None, 1, self.run.server_cpus, (), (), ())
        client = ",".join(map(str, self.run.client_cpus or ())) or None
        with bench.servers(self.run.binary, setup, None, client) as server:
            endpoints = tuple(server.endpoints)
            bench.probe.reset_stats(endpoints)
            before = bench.probe.cpu_seconds(server.pids)
            with self.stage("measure"):
                self.outcome.measurement = run_replay(
                    self.run.kvload, self.run.trace, self.run.options.replay,
                    Target(endpoints, False), self.run.client_cpus,
                    self.log_dir / "replay.log")
            stats = bench.probe.collect(endpoints).get("commandstats", {})
            self.outcome.server = {
                "calls": sum(v["calls"] for v in stats.values()),
                "commands": {n: {"calls": v["calls"], "usec_per_call": v["usec_per_call"]}
                             for n, v in stats.items()}}
            after = bench.probe.cpu_seconds(server.pids)
            if before is not None and after is not None:
                self.outcome.server["cpu_seconds"] = round(after - before, 3)
            self.outcome.checks["dbsize"] = bench.probe.keys(endpoints)

    def series(self) -> Series:
        """``REPLAY <file>`` as the command; the trace's digest, speed and seeding in
        ``config_set``; its connections as clients, its commands as requests."""
        trace, replay = self.run.trace, self.run.options.replay
        return Series(command=f"REPLAY {trace.path.name}", data_size=None, pipeline=None,
                      clients=int(trace.info.get("connections") or 0),
                      requests=trace.commands, duration=None, keyspacelen=None,
                      cluster_mode=False, tls=False, io_threads=None, warmup=0,
                      benchmark_threads=None,
                      config_set={"trace_sha256": trace.sha256, "speed": replay.speed,
                                  "seed_from_trace": "yes" if replay.seed else "no"},
                      run=self.number, trial_id=self.identity)

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        return build_row(self.series(), self.run.context, outcome, timestamp,
                         Details(client=client_record(outcome.measurement)))


@dataclass
class TraceRan:
    run: TraceRun
    persisted: Persisted[RunSummary]


def run_trace(options: TraceOptions, store: StoreRequest, world: World,
              observer: Callable[[], Observer],
              policy: InterferencePolicy | None = None) -> TraceRan:
    """The trace checked, then replayed ``runs`` times, each row persisted as it finishes;
    a disturbed replay rerun once, excluded or kept as ``policy`` says."""
    run = prepare_trace(options)
    log_to(run.out_dir)
    persisted = execute_persisting(
        store, world,
        lambda writer: Runner(run, observer(), writer, world.launcher, policy=policy))
    return TraceRan(run, persisted)


@dataclass
class TraceSides:
    """``kvperf compare --trace``: the same trace replayed on each side's server, round after
    round, the sides in a random order in each round (seeded: the order is reproducible);
    a batch of the one runner, whose rows go to ``out_dir``/metrics.json."""

    sides: dict[str, TraceRun]
    rounds: int
    out_dir: Path
    seed: int = 0

    @property
    def blocked(self) -> str | None:
        return None

    def works(self) -> list[TraceWork]:
        out: list[TraceWork] = []
        for round_ in range(1, self.rounds + 1):
            order = list(self.sides)
            random.Random(self.seed * 1000 + round_).shuffle(order)
            out += [TraceWork(self.sides[name], round_) for name in order]
        return out


@dataclass
class TraceCompared:
    sides: TraceSides
    persisted: Persisted[RunSummary]

    def rows(self, side: str) -> list[Row]:
        summary = self.persisted.summary
        label = self.sides.sides[side].context.label
        return [r for r in (summary.rows if summary else []) if r["label"] == label]


def compare_trace(options: dict[str, TraceOptions], rounds: int, out_dir: Path,
                  store: StoreRequest, world: World,
                  observer: Callable[[], Observer],
                  policy: InterferencePolicy | None = None) -> TraceCompared:
    """Every side prepared (the trace checked once per side, before any server starts), then
    the rounds interleaved; each row persisted as it finishes. Under ``policy.retry`` a
    disturbed replay is run once more right away (that side's only: each replay is a trial
    on its own fresh server, not a duet round); ``policy.exclude`` leaves one that remains
    disturbed out of the verdicts."""
    if rounds < 2:
        raise UsageError(f"--runs must be at least 2 to compare, got {rounds}")
    labels = [o.label for o in options.values()]
    if len(set(labels)) != len(labels):
        raise UsageError("the sides of a comparison need distinct labels")
    sides = TraceSides({name: prepare_trace(o) for name, o in options.items()}, rounds,
                       out_dir)
    digests = {run.trace.sha256 for run in sides.sides.values()}
    assert len(digests) == 1, "one trace for every side"
    out_dir.mkdir(parents=True, exist_ok=True)
    log_to(out_dir)
    persisted = execute_persisting(
        store, world,
        lambda writer: Runner(sides, observer(), writer, world.launcher, policy=policy))
    return TraceCompared(sides, persisted)
