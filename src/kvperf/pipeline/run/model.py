"""What the pipeline's parts share: the run's options, the prepared plan, progress hooks,
and the two seams a run touches the world through — the server launcher and the probe
(the trial's view of a running server). ServerGroup and LiveProbe are the real ones; unit
tests pass recording fakes."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Protocol

from kvperf.clients.manifest import Subject
from kvperf.config.model import BenchmarkSpec
from kvperf.core.cpus import parse_cpu_list
from kvperf.core.kinds import Concurrency
from kvperf.driver.base import Driver, Target
from kvperf.driver.seed import Keyspace, KeyStore
from kvperf.pipeline.request.options import RunOptions
from kvperf.pipeline.run.gates import GatePlan
from kvperf.pipeline.world import Launcher, ServerHandle
from kvperf.plan.trial import ServerSetup, Trial
from kvperf.results.interference import DISTURBED_SHARE, interference_record
from kvperf.results.row import Row, RunContext, TrialOutcome, is_disturbed, is_ok
from kvperf.server import memory as server_memory
from kvperf.server import stats as server_stats
from kvperf.server.binary import ServerBinary
from kvperf.server.host import available_cpus
from kvperf.server.interference import Sampled, Scope
from kvperf.server.interference_probe import INTERVAL, Sampler
from kvperf.server.memory import MemoryInfo
from kvperf.server.process import read_cpu_times
from kvperf.server.resp import Endpoint
from kvperf.server.stats import Collected
from kvperf.server.tls import TlsFiles


@dataclass
class Prepared:
    """Everything decided before the first server starts."""

    options: RunOptions
    specs: list[BenchmarkSpec]
    trials: list[Trial]
    driver: Driver
    binary: ServerBinary | None
    context: RunContext
    out_dir: Path
    gates: GatePlan | None = None  # the run's KPI gates (pipeline/run/gates.py), judged at the end
    # --client: the client harnesses, each trial's concurrency models, kvload's reference
    subjects: tuple[Subject, ...] = ()
    models: dict[tuple[str, int], tuple[Concurrency, ...]] = field(default_factory=dict)
    reference: bool = False

    @property
    def blocked(self) -> str | None:
        return self.options.blocked


@dataclass
class RunSummary:
    """What a finished (or interrupted) run produced, whatever kind of work it ran."""

    rows: list[Row] = field(default_factory=list)
    metrics_path: Path | None = None

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if not is_ok(r))

    @property
    def kpis_failed(self) -> int:
        """KPIs of definitions' tests that failed (results/row.py's ``definition.kpis``)."""
        return sum(1 for r in self.rows for k in (r.get("definition") or {}).get("kpis", ())
                   if not k["passed"])

    @property
    def disturbed(self) -> int:
        """Rows other processes disturbed (kept or excluded: ``interference``)."""
        return sum(1 for r in self.rows if is_disturbed(r))

    @property
    def exit_code(self) -> int:
        """The one rule: 1 when a unit of work failed or a KPI did, else 0."""
        return 1 if self.failed or self.kpis_failed else 0


class Work(Protocol):
    """One unit of work — a config-matrix trial, a definition's test, a module scenario —
    run by pipeline/runner.Runner: it says who it is and where it logs, runs its stages on
    the servers the runner's ``Bench`` starts and probes, and makes its row."""

    @property
    def identity(self) -> str:
        """Its trial id: the same work on every side of an interleaved run."""
        ...

    @property
    def name(self) -> str:
        """How logs and failure lines call it (``trial 3``)."""
        ...

    def describe(self) -> str: ...

    @property
    def log_dir(self) -> Path: ...

    @property
    def shared_server(self) -> Hashable | None:
        """Consecutive works of one key run on one server (a module group's); None: a
        fresh server of its own."""
        ...

    def execute(self, bench: Bench) -> None:
        """Its stages, into ``bench.outcome`` (raising what fails it)."""
        ...

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row: ...


class Observer(Protocol):
    """Progress hooks over units of work; the CLI passes a reporter, tests a recorder."""

    def started(self, work: Work, position: int, total: int) -> None: ...

    def stage(self, work: Work, name: str) -> None: ...

    def finished(self, work: Work, row: Row) -> None: ...


class SilentObserver:
    """An Observer that ignores every event."""

    def started(self, work: Work, position: int, total: int) -> None:
        pass

    def stage(self, work: Work, name: str) -> None:
        pass

    def finished(self, work: Work, row: Row) -> None:
        pass


class Batch(Protocol):
    """What one side runs: its units of work, where its rows go, why it cannot run."""

    @property
    def out_dir(self) -> Path: ...

    @property
    def blocked(self) -> str | None: ...

    def works(self) -> Sequence[Work]: ...


class TrialExecutor(Protocol):
    """One side of an interleaved run (pipeline/runner.Runner): runs a work into a row."""

    @property
    def blocked(self) -> str | None: ...

    def run_trial(self, work: Work, sync: Callable[[str], None] | None = None) -> Row: ...


class Watch(Protocol):
    """One measure stage's interference sampling: ``result`` once it has ended (None:
    nothing was sampled)."""

    @property
    def result(self) -> Sampled | None: ...

    def __enter__(self) -> Watch: ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...


class Watcher(Protocol):
    """Starts a measure stage's interference sampling (``LiveWatcher``: /proc)."""

    interval: float

    def watch(self, scope: Scope) -> Watch: ...


SAMPLING_ENV = "KVPERF_INTERFERENCE"  # "off": no sampling (benchmarks/interference_overhead.py)


class _NoWatch:
    result: Sampled | None = None

    def __enter__(self) -> _NoWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@dataclass
class LiveWatcher:
    """The real watcher: a /proc sampler thread per measure stage
    (server/interference_probe.py), unless ``$KVPERF_INTERFERENCE`` is ``off`` (for the
    overhead benchmark only)."""

    interval: float = INTERVAL

    def watch(self, scope: Scope) -> Watch:
        if os.environ.get(SAMPLING_ENV, "").lower() == "off":
            return _NoWatch()
        return Sampler(scope, self.interval)


MEASURE_STAGE = "measure"


def watch_scope(pinning: dict[str, str | None], servers: list[int],
                usable: tuple[int, ...]) -> Scope:
    """The cores a measure stage watches: the server's and the client's when both are
    pinned (the server to fewer than all ``usable`` CPUs), else every usable CPU. A remote
    server's CPUs are not this host's (its pinning is left out by the caller)."""
    server, client = pinning.get("server"), pinning.get("client")
    server_cpus = parse_cpu_list(server) if server else ()
    local_server = bool(servers)
    server_pinned = bool(server_cpus) and set(server_cpus) < set(usable)
    pinned = bool(client) and (server_pinned or not local_server)
    if not pinned:
        return Scope(usable, False, os.getpid(), tuple(servers))
    cores = set(parse_cpu_list(client or "")) | (set(server_cpus) if local_server else set())
    return Scope(tuple(sorted(cores)), True, os.getpid(), tuple(servers))


@dataclass
class Bench:
    """A unit of work's view of the runner while it runs: its outcome, stages, servers
    (``servers`` is pipeline/runner.Runner's), the probe, the duet's meeting points; its
    measure stage is sampled for interference (``watcher``, judged by ``threshold``)."""

    work: Work
    outcome: TrialOutcome
    observer: Observer
    probe: Probe
    launcher: Launcher
    starter: Callable[..., contextlib.AbstractContextManager[ServerHandle]]
    tls_files: Callable[[], TlsFiles]
    sync: Callable[[str], None] | None = None
    watcher: Watcher = field(default_factory=LiveWatcher)
    threshold: float | None = DISTURBED_SHARE
    server_pids: list[int] = field(default_factory=list)  # local ones (Runner._servers)
    # A server kept between works (run --definitions' server reuse, Runner._servers): the
    # key the work may reuse one under (set before ``servers``), and, set by a work that
    # left the data as it found it, what to run when its server stops at last (the server
    # is then kept for the next work of the key; ``kept`` is the runner's ``_kept_by``).
    reuse_key: Hashable | None = None
    keep: Callable[[], None] | None = None
    kept: Callable[[Work, Hashable | None], str | None] = field(default=lambda _w, _k: None)

    def servers(self, binary: ServerBinary, setup: ServerSetup, tls: TlsFiles | None = None,
                client: str | None = None, **wrapping: object
                ) -> contextlib.AbstractContextManager[ServerHandle]:
        """The work's servers, started (stage ``server_start``) and ready; leaving stops
        them (a shared one stays for the next work of its key). Pinning (``client``: the
        load's CPUs), the configuration applied and remote CPU times are recorded; a tool
        failure while they run is blamed on a crashed server, else their health is the
        work's error."""
        return self.starter(self, binary, setup, tls, client, **wrapping)

    def kept_by(self, key: Hashable | None) -> str | None:
        """The work that left the server the runner keeps under ``key`` (None: none is;
        a server kept under another key is stopped now)."""
        return self.kept(self.work, key)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """A stage, timed; the measure stage of every kind of work is also sampled for
        interference (the row's ``interference``)."""
        self.observer.stage(self.work, name)
        started = time.monotonic()
        watch = (self.watcher.watch(watch_scope(self.outcome.pinning, self.server_pids,
                                                tuple(sorted(available_cpus()))))
                 if name == MEASURE_STAGE else None)
        try:
            with watch or contextlib.nullcontext():
                yield
        finally:
            self.outcome.stage_seconds[name] = time.monotonic() - started
            if watch is not None and watch.result is not None:
                measured = self.outcome.measurement
                saturated = measured.extra.get("client_saturated") if measured else None
                self.outcome.interference = interference_record(
                    watch.result, self.watcher.interval, self.threshold,
                    None if saturated is None else bool(saturated))

    def meet(self, stage: str) -> None:
        if self.sync is not None:
            self.sync(stage)


class OnBench:
    """A kind of work that keeps the Bench it executes on (definition tests, module
    scenarios, replays): its outcome and stages are the bench's."""

    bench: Bench | None

    @property
    def outcome(self) -> TrialOutcome:
        assert self.bench is not None
        return self.bench.outcome

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        assert self.bench is not None
        return self.bench.stage(name)


class Probe(Protocol):
    """The view a unit of work has of a running server — its keys, counters (INFO,
    commandstats), memory and CPU time — read here and nowhere else."""

    def keyspace(self, target: Target) -> contextlib.AbstractContextManager[KeyStore]: ...

    def reset_stats(self, endpoints: tuple[Endpoint, ...]) -> None: ...

    def collect(self, endpoints: tuple[Endpoint, ...]) -> Collected: ...

    def cpu_seconds(self, pids: list[int]) -> float | None: ...

    def memory(self, endpoints: tuple[Endpoint, ...]) -> MemoryInfo | None: ...

    def memory_sample(self, endpoints: tuple[Endpoint, ...]) -> list[int]: ...

    def keys(self, endpoints: tuple[Endpoint, ...]) -> int: ...

    def saving(self, endpoints: tuple[Endpoint, ...]) -> bool: ...


class HandleCpuProbe:
    """A probe whose CPU seconds come from the server handle (a remote host's /proc, where
    the pids are not this host's); everything else from ``inner``."""

    def __init__(self, inner: Probe, cpu: Callable[[], float | None]) -> None:
        self.inner = inner
        self.cpu = cpu

    def keyspace(self, target: Target) -> contextlib.AbstractContextManager[KeyStore]:
        return self.inner.keyspace(target)

    def reset_stats(self, endpoints: tuple[Endpoint, ...]) -> None:
        self.inner.reset_stats(endpoints)

    def collect(self, endpoints: tuple[Endpoint, ...]) -> Collected:
        return self.inner.collect(endpoints)

    def cpu_seconds(self, pids: list[int]) -> float | None:
        return self.cpu()

    def memory(self, endpoints: tuple[Endpoint, ...]) -> MemoryInfo | None:
        return self.inner.memory(endpoints)

    def memory_sample(self, endpoints: tuple[Endpoint, ...]) -> list[int]:
        return self.inner.memory_sample(endpoints)

    def keys(self, endpoints: tuple[Endpoint, ...]) -> int:
        return self.inner.keys(endpoints)

    def saving(self, endpoints: tuple[Endpoint, ...]) -> bool:
        return self.inner.saving(endpoints)


class LiveProbe:
    """The real probe: RESP connections, INFO, and /proc CPU times."""

    def keyspace(self, target: Target) -> contextlib.AbstractContextManager[KeyStore]:
        return Keyspace.open(target.endpoints, target.cluster)

    def reset_stats(self, endpoints: tuple[Endpoint, ...]) -> None:
        server_stats.reset_stats(endpoints)

    def collect(self, endpoints: tuple[Endpoint, ...]) -> Collected:
        return server_stats.collect(endpoints)

    def memory(self, endpoints: tuple[Endpoint, ...]) -> MemoryInfo | None:
        return server_memory.read_memory(endpoints)

    def memory_sample(self, endpoints: tuple[Endpoint, ...]) -> list[int]:
        return server_memory.sample_usage(endpoints)

    def keys(self, endpoints: tuple[Endpoint, ...]) -> int:
        """DBSIZE summed over the nodes."""
        return server_memory.key_count(endpoints)

    def saving(self, endpoints: tuple[Endpoint, ...]) -> bool:
        """Whether a node still writes an RDB in the background (INFO persistence)."""
        return server_stats.bgsave_in_progress(endpoints)

    def cpu_seconds(self, pids: list[int]) -> float | None:
        """The nodes' user + system CPU seconds so far (None: no pids, or one is gone)."""
        if not pids:
            return None
        times = [read_cpu_times(pid) for pid in pids]
        return None if any(t is None for t in times) else sum(t.total for t in times if t)
