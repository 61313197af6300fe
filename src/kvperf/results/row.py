"""The metrics.json row: the seed system's fields plus kvperf's provenance and status.

Format versions (``kvperf_format``):
  1 — first version: seed fields + run, trial_id, tool, tool_version, server_version, status,
      error, stage_seconds, io_threads, warmup, env (provenance only), server (server-side
      counters), client (the load tool's CPU per request, errors, corrected and service
      latency), client_saturated, checks (what proved the trial measured something real),
      histogram_file (HDR histograms of the trial, relative to metrics.json).
  2 — adds ``measure`` ("timing", "instructions" or "perf-instructions": how the trial was
      measured; under callgrind rps and latency are those of a ~50x slowed server) and
      ``instructions`` (null in timing mode; see results/instructions.py for its fields:
      instructions per request, the command function's inclusive cost per call, the top
      functions' inclusive cost per request, the callgrind files). Readers of version 1
      treat both as absent.
  3 — adds ``revision``: what the history calls this run's server when no commit names it
      (compare/noise sides: ``<server version>@<binary sha256 prefix>``; null otherwise, and
      the history then uses the commit or the label). Readers of versions 1–2 treat it as null.
  4 — adds ``definition``: null for rows of kvperf's config matrix; for a benchmark
      definition's test (``kvperf run --definitions``) an object with ``name``, ``file``,
      ``topology``, ``override_test_time``, ``metrics`` (the exporter's JSONPaths → numbers,
      null when a path found none), ``kpis`` (bound, value, passed per KPI) and ``command_mix``
      (the commands the definition asks for and INFO commandstats' share of each). Such rows
      put the definition's name in ``command`` and ``{"topology": NAME}`` in ``config_set``:
      one series per definition × topology. Readers of versions 1–3 treat it as null.
  5 — adds ``profile``: null unless the trial ran under ``--profile`` (perf record on every
      server node in the measure stage); then profiler, event, mode, frequency, call_graph,
      kernel_stacks, note, and per node its files (relative to metrics.json), top_symbols
      and top_dsos (self CPU %); ``dsos`` (added later, absent before: read it from the
      nodes) is the share of on-CPU samples per shared object, the mean over the nodes.
      Profiled rows are excluded from timing statistics
      (``is_timed``). Readers of versions 1–4 treat it as null. Also in 5: instruction
      mode's ``instructions.flamegraph`` (callgrind's call graph as an SVG; absent before).
  6 — adds ``memory`` (server/memory.py, ``MemoryRecord``): INFO memory of the empty server,
      after seeding (``seeded``) and after measuring (the top-level fields: used_memory,
      used_memory_dataset, used_memory_rss, mem_fragmentation_ratio, keys), the items seeded,
      bytes_per_key = (used_memory − used_memory_empty) / items, rss_bytes_per_key, and a
      MEMORY USAGE sample (sample_bytes_per_key, sample_keys); null when the server could not
      be read (or in client mode). A module scenario's memory (``run --module-config …
      --measure memory``) adds ``unit`` (``filter capacity``, ``document``, ``call`` or
      ``key``): what ``items`` counts, bytes_per_key being bytes per that unit (absent: key).
      Also ``side_label`` on interleaved rows: the side as readers see it (``valkey 8.0.1``,
      a ref). Readers of versions 1–5 treat both as absent.
      Also: ``scenario`` on rows of a module scenario (``kvperf run --module-config``):
      group, id, type, command, dataset and its rows, setup commands, flush, module; such rows
      put the scenario id in ``command`` and ``group``/``scenario`` (plus the config set's
      settings) in ``config_set``: one series per group × scenario × config set. Absent on
      every other row.
  7 — ``scenario`` is on every row: null but on a module scenario's row (format 6 rows of a
      module scenario already carried it; 6 → 7 adds a null one elsewhere). The nested
      objects are typed (results/records.py); their JSON is as before.
  8 — adds ``interference`` (results/interference.py, ``InterferenceRecord``): who else used
      the watched CPUs during the measure stage — per core busy, own, foreign and steal
      seconds, the top foreign processes, the server's and the load tool's involuntary
      context switches, the client-saturation flag — and the verdict: ``disturbed`` with its
      ``cause``, ``excluded`` (--exclude-disturbed: left out of timing statistics,
      ``is_timed``), ``attempt`` and ``retried`` (--retry-disturbed reran the trial). Null
      when nothing was sampled (no measure stage, sampling off); readers of versions 1–7
      treat it as null.
      Also in 8: ``definition.tests`` on the row of a redis-benchmark / valkey-benchmark
      client that ran several tests (its default suite, ``-t a,b``): each test's numbers by
      the tool's test name; the row's are the suite as one load (driver/benchmark_run.py).
      Absent elsewhere.
  9 — adds ``harness`` (results/records.py, ``HarnessRecord``): null but on a client
      library's row (``kvperf run --client NAME``, docs/CLIENTS.md), whose ``tool`` and
      ``tool_version`` are the client's name and library version and whose ``config_set``
      holds ``client``, ``library``, ``version``, ``language``, ``runtime`` and
      ``concurrency``: one series per client × workload. Readers of versions 1–8 treat it
      as null. Also ``sweep`` on the rows of a rate sweep (``run --rate-sweep``,
      results/sweep.py): the sweep's id, the row's role (the closed-loop ``saturation``
      trial or an open-loop ``point``), the point's target rps and the knee rule. A point's
      step is in ``config_set`` (``{"rate": "60%"}``): each point is a series. Absent
      elsewhere.
  10 — a client library's ``harness`` gains ``wire`` (the server's INFO stats over the
      harness's run: calls, reads, calls per read, the pipeline asked for, the expected calls
      per read of a true pipeline, the bar and the batching verdict; clients/wire.py; null
      when the server did not report the counters), ``cpu_window`` (the harness's own CPU in
      its measured window: user_s, system_s, source; null when it did not report one) and
      ``process_cpu_us_per_op`` (wait4's total of its process tree per operation, warmup and
      start-up included: what ``cpu_us_per_op`` held in format 9). ``cpu_us_per_op`` and the
      row's ``client.client_cpu_us_per_request`` are now the measured window's CPU per
      measured operation, like kvload's. A client row's histograms file holds its
      closed-loop latency under ``service`` only (format 9 also wrote it under
      ``corrected``; readers drop that key: store/files.read_histograms). The upgrade of a
      format 9 client row moves its ``cpu_us_per_op`` to ``process_cpu_us_per_op`` and
      nulls ``cpu_us_per_op``, ``client.client_cpu_us_per_request``, ``cpu_window`` and
      ``wire`` (a process total is not a window's figure); other rows are unchanged.
      Also in 10: ``auto`` on the rows of a ``--runs auto`` comparison (compare, noise):
      the rounds its series ran, why it stopped (``decided``, ``max-runs reached``) and its
      verdict at the stop (analysis/sequential.py), added to metrics.json once the
      comparison ended. Absent elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict, cast

from kvperf.core.errors import UsageError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.driver.base import Measurement
from kvperf.plan.trial import Trial
from kvperf.results.metrics import LATENCY_FIELDS
from kvperf.results.records import (
    Checks,
    ClientRecord,
    CommandCalls,
    DefinitionRecord,
    Env,
    HarnessRecord,
    InstructionsRecord,
    InterferenceRecord,
    ProfileRecord,
    ScenarioRecord,
)
from kvperf.results.sweep import SweepRecord
from kvperf.server.replication import ReplicationLag

FORMAT_VERSION = 10


# The fields that identify a series (what compare/history group by), in the order labels
# show them. ``env`` never is one. (series_key hashes them with sorted keys: the order here
# does not change a key.)
KEY_FIELDS = ("command", "data_size", "pipeline", "clients", "io_threads", "cluster_mode",
              "tls", "requests", "duration", "keyspacelen", "warmup", "benchmark_threads",
              "config_set")


class AutoStop(TypedDict):
    """The row's ``auto`` object (``--runs auto``): its series' rounds and stop."""

    rounds: int
    stop: str  # "decided", "max-runs reached"
    verdict: str


class ServerSide(TypedDict, total=False):
    """The row's ``server`` object: counters of the measure stage (INFO, /proc)."""

    calls: int | None
    usec_per_call: float | None
    keyspace_hits: int | None
    keyspace_misses: int | None
    monotonic_clock: str | None
    commands: dict[str, CommandCalls]  # per command (a sequence's, a definition's mix)
    calls_per_node: list[int]
    cpu_seconds: float
    cpu_us_per_request: float
    replication_lag: ReplicationLag | None  # sampled through the measure stage


class MemoryReading(TypedDict, total=False):
    """One INFO memory reading (server/memory.MemoryInfo's fields)."""

    used_memory: int
    used_memory_dataset: int
    used_memory_rss: int
    mem_fragmentation_ratio: float | None
    keys: int


class MemoryRecord(MemoryReading, total=False):
    """The row's ``memory`` object (format 6): the reading after measuring at top level (the
    metrics ``memory.used_memory`` …), the empty server's, the seeded one, bytes per key."""

    used_memory_empty: int
    used_memory_rss_empty: int
    seeded: MemoryReading
    items: int  # keys seeded (a hash's, set's or zset's members: elements)
    bytes_per_key: float | None
    rss_bytes_per_key: float | None
    sample_bytes_per_key: float | None  # MEMORY USAGE of ~200 random keys, per item
    sample_keys: int
    unit: str  # a module scenario's: what items counts (pipeline/run/module_memory.py)


class Row(TypedDict, total=False):
    """A metrics.json row (format FORMAT_VERSION; module docstring for the versions). Rows of
    the seed system's files carry the seed's subset and no status (they count as ok). The
    nested objects are typed (results/records.py); only ``env`` stays open: its facts grow
    with the hosts and builds kvperf records (docs/guide/results.md)."""

    kvperf_format: int
    timestamp: str
    label: str
    commit: str | None
    revision: str | None
    # the series (KEY_FIELDS)
    command: str
    data_size: int | None
    pipeline: int | None
    clients: int | None
    requests: int | None
    duration: float | None
    keyspacelen: int | None
    cluster_mode: bool
    tls: bool
    io_threads: int | None
    warmup: int
    benchmark_threads: int | None
    config_set: dict[str, str] | None
    # the measurement
    rps: float | None
    avg_latency_ms: float | None
    min_latency_ms: float | None
    p50_latency_ms: float | None
    p95_latency_ms: float | None
    p99_latency_ms: float | None
    max_latency_ms: float | None
    # the trial
    run: int
    trial_id: str
    tool: str
    tool_version: str
    server_version: str | None
    status: str
    error: str | None
    stage_seconds: dict[str, float]
    client_saturated: bool | None
    server: ServerSide
    client: ClientRecord
    checks: Checks
    histogram_file: str | None
    measure: str
    instructions: InstructionsRecord | None
    env: Env
    # format 4: a definition's test (file, topology, override_test_time, exporter metrics,
    # KPIs, command mix, tools, notes); absent from a config trial's row
    definition: DefinitionRecord | None
    # format 7: a module scenario's details; null elsewhere
    scenario: ScenarioRecord | None
    # format 5: the --profile object (pipeline/run/profiling.py); null when not profiled
    profile: ProfileRecord | None
    # format 6: the server's memory (MemoryRecord); null when it could not be read
    memory: MemoryRecord | None
    # format 8: who else used the measured CPUs, and whether that disturbed the trial
    interference: InterferenceRecord | None
    # format 9: a client library's trial (kvperf run --client); null elsewhere
    harness: HarnessRecord | None
    # interleaved sides (compare, noise, run --commits): which side, the order's seed and
    # the schedule
    side: str
    side_label: str  # format 6: "valkey 8.0.1", a ref: the side as readers see it
    ab_seed: int
    ab_schedule: str
    # a rate sweep's rows (results/sweep.py); absent from every other row
    sweep: SweepRecord
    # --runs auto: the series' rounds and why it stopped; absent from every other row
    auto: AutoStop
    # a trial with faults (results/failover.py); absent from every other row
    failover: dict[str, Any]



def field_of(row: Row, name: str) -> Any:
    """A row field by a name known only at run time (KEY_FIELDS, a metric's top part)."""
    return cast(Mapping[str, Any], row).get(name)


def is_ok(row: Row) -> bool:
    """Whether a row measured something: the one place a row's status is read (rows of the
    seed system's files have no status and count as ok)."""
    return bool(row.get("status", "ok") == "ok")


def is_timed(row: Row) -> bool:
    """Whether a row's throughput and latency may enter timing statistics: it is ok, was
    not profiled (perf sampling perturbs the server it measures) and not excluded as
    disturbed (--exclude-disturbed)."""
    return is_ok(row) and not row.get("profile") and not is_excluded(row)


def is_disturbed(row: Row) -> bool:
    """Whether other processes (or the hypervisor) took the trial's CPUs (format 8)."""
    return bool((row.get("interference") or {}).get("disturbed"))


def is_excluded(row: Row) -> bool:
    """Whether a disturbed row was left out of timing statistics (--exclude-disturbed)."""
    return bool((row.get("interference") or {}).get("excluded"))


def mark_failed(row: Row, error: str) -> None:
    """Turn an ok row into a failed one (a duet partner failed in the same round)."""
    if is_ok(row):
        row["status"], row["error"] = "failed", error


def _to_2(row: Row) -> None:
    row.setdefault("measure", Measure.TIMING.value)
    row.setdefault("instructions", None)


def _to_3(row: Row) -> None:
    row.setdefault("revision", None)


def _to_4(row: Row) -> None:
    row.setdefault("definition", None)


def _to_5(row: Row) -> None:
    row.setdefault("profile", None)


def _to_6(row: Row) -> None:
    row.setdefault("memory", None)


def _to_7(row: Row) -> None:
    row.setdefault("scenario", None)


def _to_8(row: Row) -> None:
    row.setdefault("interference", None)


def _to_9(row: Row) -> None:
    row.setdefault("harness", None)


def _to_10(row: Row) -> None:
    harness = row.get("harness")
    if not harness:
        return
    harness.setdefault("process_cpu_us_per_op", harness.get("cpu_us_per_op"))
    harness["cpu_us_per_op"] = None
    harness.setdefault("cpu_window", None)
    harness.setdefault("wire", None)
    client = row.get("client")
    if client:
        client["client_cpu_us_per_request"] = None


_UPGRADES = {1: _to_2, 2: _to_3, 3: _to_4, 4: _to_5, 5: _to_6, 6: _to_7,
             7: _to_8, 8: _to_9, 9: _to_10}  # version N → N + 1


def format_of(row: Row, source: str) -> int | None:
    """The row's ``kvperf_format`` (None: a seed-format row). A newer or unknown version is
    refused (UsageError, exit 2) naming it: guessing at fields this kvperf does not know
    would misread them."""
    version = row.get("kvperf_format")
    if version is None:
        return None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageError(f"{source}: kvperf_format {version!r} is not a format version")
    if version > FORMAT_VERSION:
        raise UsageError(f"{source}: kvperf_format {version} is newer than this kvperf reads "
                         f"(up to {FORMAT_VERSION}); upgrade kvperf to read it")
    return version


def upgrade(row: Row, source: str) -> Row:
    """A row of any known ``kvperf_format`` brought to FORMAT_VERSION step by step (in
    place); a seed-format row as it is; a newer version refused (``format_of``)."""
    version = format_of(row, source)
    if version is None:
        return row
    while version < FORMAT_VERSION:
        _UPGRADES[version](row)
        version += 1
    row["kvperf_format"] = version
    return row


# A series' parameter values by KEY_FIELDS name (history filters, change points' series).
ParamValue = str | int | float | bool | dict[str, str] | None
SeriesParams = dict[str, ParamValue]


def series_key(row: Row) -> str:
    """Stable hash of a row's KEY_FIELDS values (absent fields count as None): its series."""
    return stable_id({name: field_of(row, name) for name in KEY_FIELDS}, length=16)


@dataclass(frozen=True)
class RunContext:
    """What is the same for every trial of a run."""

    label: str
    commit: str | None
    tool: str
    tool_version: str
    server_version: str | None
    env: Env = field(default_factory=dict)
    measure: Measure = Measure.TIMING
    revision: str | None = None  # history identity when no commit names the server


@dataclass
class TrialOutcome:
    """What happened in one trial."""

    measurement: Measurement | None = None
    error: str | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)
    server: ServerSide = field(default_factory=lambda: ServerSide())
    checks: Checks = field(default_factory=lambda: Checks())
    pinning: dict[str, str | None] = field(default_factory=dict)
    histogram_file: str | None = None
    instructions: InstructionsRecord | None = None
    profile: ProfileRecord | None = None
    memory: MemoryRecord | None = None
    interference: InterferenceRecord | None = None  # the measure stage's (format 8)
    memory_only: bool = False  # --measure memory: seeded and read, nothing measured
    failover: dict[str, Any] | None = None  # a trial with faults (results/failover.py)

    @property
    def ok(self) -> bool:
        measured = self.measurement is not None or (self.memory_only and bool(self.memory))
        return self.error is None and measured


class Series(TypedDict):
    """What a row says ran: its series fields (KEY_FIELDS), its run and its trial id. Each
    kind of work says it its own way (``trial_series``, ``DefinitionTest.series``,
    ``ScenarioTest.series``); ``build_row`` writes every row from one."""

    command: str
    data_size: int | None
    pipeline: int | None
    clients: int | None
    requests: int | None
    duration: float | None
    keyspacelen: int | None
    cluster_mode: bool
    tls: bool
    io_threads: int | None
    warmup: int
    benchmark_threads: int | None
    config_set: dict[str, str] | None
    run: int
    trial_id: str


class Details(TypedDict, total=False):
    """What one kind of work adds to its rows: the load tool's view (the matrix's), a
    definition's or a module scenario's object."""

    client: ClientRecord
    definition: DefinitionRecord
    scenario: ScenarioRecord
    harness: HarnessRecord


def _metrics(m: Measurement | None) -> dict[str, float | None]:
    """rps and latencies, rounded; NaN (a percentile the tool did not give) → null."""
    if m is None:
        return {"rps": None, **dict.fromkeys(LATENCY_FIELDS)}
    values = {"rps": round(m.rps, 2),
              **{f: round(getattr(m, f), 3) for f in LATENCY_FIELDS}}
    return {k: None if v != v else v for k, v in values.items()}


def client_record(m: Measurement | None) -> ClientRecord:
    """The load tool's own view: CPU per request, errors, both latency kinds (kvload)."""
    if m is None:
        return {}
    keep = ("mode", "target_rps", "errors", "late", "late_own", "unsent", "latency_ms",
            "client_cpu_us_per_request", "pubsub", "staircase")
    return cast(ClientRecord, {k: m.extra[k] for k in keep if k in m.extra})


def trial_series(trial: Trial) -> Series:
    """A config-matrix trial's series fields."""
    load, server = trial.load, trial.server
    return Series(command=load.command.name, data_size=load.data_size,
                  pipeline=load.pipeline, clients=load.clients, requests=load.requests,
                  duration=load.duration, keyspacelen=load.keyspacelen,
                  cluster_mode=server.cluster_mode, tls=server.tls,
                  io_threads=server.io_threads, warmup=load.warmup,
                  benchmark_threads=load.threads,
                  config_set=(dict(server.config_set) | _replica_set(trial)
                              | _staircase_set(trial) | load.workload()) or None,
                  run=trial.run, trial_id=trial.id)


def _replica_set(trial: Trial) -> dict[str, str]:
    """Replicas, where reads went and the fault schedule, in the row's series
    (``config_set``, as a definition's topology is): a trial reading from replicas, or
    with faults, is a series of its own."""
    faults = ({"faults": "; ".join(f.text() for f in trial.load.faults)}
              if trial.load.faults else {})
    if not trial.server.replicas:
        return faults
    return {"replicas": str(trial.server.replicas),
            "read_from_replicas": trial.load.read_from_replicas, **faults}


def _staircase_set(trial: Trial) -> dict[str, str]:
    """A staircase trial's ramp in the row's series (``config_set``): its totals span the
    ramp, so it is a series of its own beside the same clients held throughout."""
    ramp = trial.load.staircase
    if ramp is None:
        return {}
    return {"staircase": f"{ramp.start}+{ramp.step} every {ramp.step_seconds}s"}


def build_row(series: Series, ctx: RunContext, outcome: TrialOutcome, timestamp: datetime,
              details: Details | None = None) -> Row:
    """One row of metrics.json (pure), whatever kind of work ran: the series it belongs to,
    the run's context, the outcome, and the kind's ``details``."""
    details = details or Details()
    measured = outcome.measurement
    row = {
        "kvperf_format": FORMAT_VERSION,
        "timestamp": timestamp.isoformat(timespec="seconds"),
        "label": ctx.label, "commit": ctx.commit, "revision": ctx.revision,
        "command": series["command"], "data_size": series["data_size"],
        "pipeline": series["pipeline"], "clients": series["clients"],
        "requests": series["requests"], "duration": series["duration"],
        "keyspacelen": series["keyspacelen"],
        **_metrics(measured),
        "cluster_mode": series["cluster_mode"], "tls": series["tls"],
        "io_threads": series["io_threads"], "warmup": series["warmup"],
        "benchmark_threads": series["benchmark_threads"],
        "config_set": series["config_set"],
        "run": series["run"], "trial_id": series["trial_id"],
        "tool": ctx.tool, "tool_version": ctx.tool_version,
        "server_version": ctx.server_version,
        "status": "ok" if outcome.ok else "failed", "error": outcome.error,
        "stage_seconds": {k: round(v, 3) for k, v in outcome.stage_seconds.items()},
        "client_saturated": (measured.extra.get("client_saturated")
                             if measured and "client" in details else None),
        "server": outcome.server, "client": details.get("client", ClientRecord()),
        "checks": outcome.checks, "histogram_file": outcome.histogram_file,
        "measure": ctx.measure, "instructions": outcome.instructions,
        "definition": details.get("definition"), "scenario": details.get("scenario"),
        "profile": outcome.profile, "memory": outcome.memory,
        "interference": outcome.interference, "harness": details.get("harness"),
        "env": {**ctx.env, "pinning": outcome.pinning},
    }
    if outcome.failover is not None:
        row["failover"] = outcome.failover
    return cast(Row, row)


@dataclass(frozen=True)
class DefinitionTest:
    """A benchmark definition's test on one topology: the series fields of its rows."""

    name: str
    topology: str
    trial_id: str
    io_threads: int | None = None
    duration: int | None = None  # the first client's --test-time (override applied)
    requests: int | None = None
    keyspacelen: int | None = None  # check.keyspacelen
    cluster: bool = False
    run: int = 1

    def series(self) -> Series:
        """The definition's name as ``command``, its topology in ``config_set``; fields a
        definition does not set as such (data size, pipeline …) are null."""
        return Series(command=self.name, data_size=None, pipeline=None, clients=None,
                      requests=self.requests, duration=self.duration,
                      keyspacelen=self.keyspacelen, cluster_mode=self.cluster, tls=False,
                      io_threads=self.io_threads, warmup=0, benchmark_threads=None,
                      config_set={"topology": self.topology}, run=self.run,
                      trial_id=self.trial_id)


@dataclass(frozen=True)
class ScenarioTest:
    """The series fields of one module scenario's row."""

    scenario: str
    group: str
    trial_id: str
    clients: int
    pipeline: int
    requests: int | None
    duration: float | None
    warmup: int
    keyspacelen: int | None
    tls: bool
    config_set: dict[str, str]
    run: int = 1  # its round when module builds run as sides

    def series(self) -> Series:
        """The scenario id as ``command``; group, scenario and config set in
        ``config_set``."""
        return Series(command=self.scenario, data_size=None, pipeline=self.pipeline,
                      clients=self.clients, requests=self.requests, duration=self.duration,
                      keyspacelen=self.keyspacelen, cluster_mode=False, tls=self.tls,
                      io_threads=None, warmup=self.warmup, benchmark_threads=None,
                      config_set={"group": self.group, "scenario": self.scenario,
                                  **self.config_set},
                      run=self.run, trial_id=self.trial_id)
