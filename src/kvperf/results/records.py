"""The typed sub-records of a metrics.json row (results/row.py's ``Row`` holds them).

Each is a ``TypedDict`` with ``total=False`` where older rows or other kinds of work leave
keys out; the row's JSON is unchanged by the typing. Only ``env`` stays open
(core/jsontypes.JsonValue values).
"""

from __future__ import annotations

from typing import TypedDict

from kvperf.core.jsontypes import JsonValue


class CommandCalls(TypedDict, total=False):
    """One command's counters in ``server.commands`` (INFO commandstats, the calls the tool's
    count implies when it counted)."""

    calls: int
    usec_per_call: float | None
    expected: int | None


class ClientRecord(TypedDict, total=False):
    """The row's ``client`` object: the load tool's own view (kvload)."""

    mode: str
    target_rps: float | None
    errors: int
    late: int  # open-loop sends > 1 ms after their intended time
    late_own: int  # of them, those kvload held back (their connection was free by then)
    unsent: int
    latency_ms: dict[str, JsonValue]
    client_cpu_us_per_request: float | None
    pubsub: dict[str, JsonValue]  # kvload pubsub: published/delivered/s, fan-out, lost …
    # a staircase trial: per step {step, connections, from_s, to_s, requests, ops_sec,
    # p50_ms, p99_ms, p99_9_ms, errors} (kvload's JSON "staircase")
    staircase: list[dict[str, JsonValue]]


class Checks(TypedDict, total=False):
    """The row's ``checks`` object: what proved the trial measured something real."""

    server_config: dict[str, str]  # CONFIG GET of what the trial set
    measure_started_at: float
    seed_commands: int
    pop_supply: int
    popped: int
    left: int
    hit_ratio: float
    executed_ratio: float
    pinning: str  # a definition's test left unpinned, and why
    replicas_in_sync: int
    replica_sync: str  # a definition's replicas: full (copied) or partial (from its snapshot)
    read_from_replicas: str  # a trial with replicas: where its reads went (no, yes, all)
    keyspacelen: int  # DBSIZE after a definition's preload and init
    clients: int  # a definition's clients run at once
    dbsize: int  # DBSIZE after a module scenario
    error_replies: int  # the load's calls the server answered with an error (any: recorded)
    rdb_checks_keyspacelen: int  # DBSIZE after a definition's reload (rdb_checks load)
    relaxed_for_faults: list[str]  # checks a trial with faults skips (errors are expected)


class InstructionsRecord(TypedDict, total=False):
    """The row's ``instructions`` object (results/instructions.py; format 2)."""

    tool: str  # callgrind or perf
    total: int
    requests: int | None
    timer_events: int
    total_per_request: float | None
    total_with_timers_per_request: float | None
    function: str | None
    function_calls: int | None
    command_per_call: float | None
    function_inclusive_per_call: dict[str, float | None]
    top_functions: dict[str, float | None]
    callgrind_files: list[str]
    flamegraph: str  # format 5: callgrind's call graph as an SVG


class ProfileEntry(TypedDict, total=False):
    """One symbol or DSO of ``perf report`` (or an off-CPU frame)."""

    name: str
    self_pct: float
    space: str  # user or kernel


class WallTime(TypedDict):
    on_cpu_ms: float
    off_cpu_ms: float
    top_off_cpu: list[ProfileEntry]


class ProfileNode(TypedDict, total=False):
    """One server node's part of the profile: files (relative to metrics.json), tops; a
    client harness's part has ``role`` "client" (absent: a server node)."""

    node: int
    role: str
    files: dict[str, str]
    top_symbols: list[ProfileEntry]
    top_dsos: list[ProfileEntry]
    wall_time: WallTime
    note: str


class ProfileWindow(TypedDict):
    delay: float
    duration: float | None


class ProfileRecord(TypedDict, total=False):
    """The row's ``profile`` object (format 5; pipeline/run/profiling.py)."""

    profiler: str
    event: str
    mode: str
    frequency: int
    call_graph: str | None
    window: ProfileWindow
    kernel_stacks: bool
    note: str | None
    nodes: list[ProfileNode]
    dsos: list[ProfileEntry]  # on-CPU share per shared object, mean over the nodes


class MixShare(TypedDict):
    """A definition's command: its share asked for, its calls and its share executed."""

    expected: float
    calls: int
    executed: float | None


class KpiRecord(TypedDict):
    kpi: str
    mode: str
    path: str
    bound: float
    value: float | None
    passed: bool
    reason: str  # why it failed without a comparison ("" otherwise)


class PreloadRecord(TypedDict, total=False):
    """A definition test's preload: ``source`` fresh (run for real), snapshot (its RDB
    loaded from the snapshot cache), reused (the server the test before left, its data
    unchanged) or none; its seconds (the preload, or the load and its
    check); the snapshot's id; ``saved`` when a real preload was saved as it; ``note``: why
    no snapshot was used."""

    source: str
    seconds: float | None
    snapshot: str
    saved: str
    note: str
    reused_from: str  # source reused: the test whose server this one ran on


class DefinitionRecord(TypedDict, total=False):
    """The row's ``definition`` object (format 4): a benchmark definition's test."""

    name: str
    file: str
    topology: str
    override_test_time: int | None
    metrics: dict[str, float | None]
    command_mix: dict[str, MixShare]
    kpis: list[KpiRecord]
    tools: list[str]
    notes: list[str]
    tests: dict[str, dict[str, float]]  # a redis-benchmark suite's numbers per test
    tested_groups: list[str]  # the definition's tested-groups (report --definitions' totals)
    preload: PreloadRecord
    server_reused: bool  # run --definitions: ran on the server the test before left


class ScenarioRecord(TypedDict, total=False):
    """The row's ``scenario`` object (format 7): a module scenario's details."""

    group: str
    id: str
    type: str
    command: str
    setup_commands: list[str]
    flush_before: bool
    sequential: bool
    cluster_execution: str
    maxdocs: int | None
    dataset: str | None
    dataset_file: str | None
    dataset_rows: int | None
    module: str | None
    module_paths: list[str]
    config: str
    notes: list[str]
    ingestion: bool
    loaded_modules: list[dict[str, str]] | None  # MODULE LIST's name and version of each


# The row's ``env``: host facts, the tool, the server binary, provenance (ref, commit, build
# log), ``pinning`` ({"server": cpus, "client": cpus}) — open: its keys grow with the facts.
Env = dict[str, JsonValue]


class CoreRecord(TypedDict):
    """One watched CPU of ``interference.cores``: seconds of the measure stage and shares of
    its wall time."""

    cpu: int
    busy_s: float
    own_s: float
    foreign_s: float
    foreign_share: float
    steal_s: float
    steal_share: float


class CulpritRecord(TypedDict):
    """A foreign process that ran on a watched core (``interference.top``)."""

    pid: int
    command: str
    cpu_s: float


class InterferenceRecord(TypedDict, total=False):
    """The row's ``interference`` object (format 8; results/interference.py): who else used
    the watched CPUs during the measure stage, and the verdict."""

    watched: str  # CPU list
    pinned: bool
    wall_s: float
    samples: int
    interval_s: float
    cores: list[CoreRecord]
    foreign_share: float  # what the verdict compares: the worst core (pinned) or all cores
    steal_share: float  # the worst core's
    top: list[CulpritRecord]
    involuntary_switches: dict[str, int]  # server, client
    client_saturated: bool | None
    threshold: float | None  # None: not judged (instruction counts, memory)
    disturbed: bool
    cause: str | None  # why it is disturbed, for footnotes
    excluded: bool  # --exclude-disturbed: left out of timing statistics (row.is_timed)
    attempt: int  # 2: the trial was rerun (--retry-disturbed)
    retried: str | None  # the first attempt's cause, when it was rerun


class WireRecord(TypedDict, total=False):
    """``harness.wire`` (format 10): the server's counters over a client harness's run and
    what they say about its batching (clients/wire.py, docs/CLIENTS.md)."""

    calls: int  # INFO stats total_commands_processed (set-up calls included)
    reads: int  # INFO stats total_reads_processed
    calls_per_read: float | None
    pipeline: int  # what the spec asked for
    expected: float  # calls per read of a true pipeline of this workload (read buffer)
    bar: float | None  # below it a batched trial fails (None: not judged)
    batching: str  # pipelined, written per command, not pipelined, implicit, one call per
    #   read, not judged


class HarnessRecord(TypedDict, total=False):
    """The row's ``harness`` object (format 9): a client library's trial (``kvperf run
    --client``, docs/CLIENTS.md) — who ran (name, library and version as the harness loaded
    it, language, runtime, concurrency model and workers), what it reported (ops, errors,
    the first error, warmup calls, its measured window), what it cost (its own CPU in the
    measured window per measured operation — format 10, null when the harness did not report
    it —, and beside it the process total: CPU of its process tree from wait4, warmup,
    start-up and the allocation pass included, per operation; peak RSS; allocations per
    operation: ``per_op`` in ``unit`` — bytes, from the harness's untimed allocation pass
    after its measured window (issue 37), with ``method`` and ``exact``; a harness of the
    older kind's count in its own unit), per-command latency (closed loop: uncorrected), the
    accounting check's table (per command: the calls it reported and the calls INFO
    commandstats counted) and, format 10, what the server saw on the wire (``wire``: calls
    per read and the batching verdict, clients/wire.py)."""

    name: str
    library: str
    version: str
    language: str
    runtime: str
    model: str
    workers: int
    ops: int
    errors: int
    first_error: str | None
    warmup: dict[str, int]
    duration_s: float
    cpu_user_s: float
    cpu_system_s: float
    cpu_us_per_op: float | None  # format 10: the measured window's (before: process total)
    cpu_window: dict[str, JsonValue] | None  # format 10: user_s, system_s, source
    process_cpu_us_per_op: float | None  # format 10: wait4's total per op, warmup included
    #   (and the allocation pass's operations, which its CPU includes)
    max_rss_kib: int
    allocations: dict[str, JsonValue] | None  # per_op, unit, method, exact (, ops)
    p99_9_latency_ms: float | None
    commands: dict[str, dict[str, float]]
    accounting: dict[str, dict[str, int]]
    wire: WireRecord | None  # format 10: calls per read (null: the server did not say)
    rate: dict[str, JsonValue] | None  # the open loop it ran (rps, arrivals): its latency is
    #   from intended send times, corrected; absent or null: closed loop, uncorrected
