"""Benchmark definitions' plans prepared for the runner (each test a unit of work,
pipeline/run/definition_work.py): one fresh server per test, rows like any run's.

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
``preload_before_replica``) and before measuring; a cluster's replicas join it with CLUSTER
REPLICATE as its servers start (server/instance.py), in sync before measuring. A pub/sub
definition's publisher and subscribers run as one ``kvload pubsub`` (definitions/pubsub.py,
driver/pubsub.py). ``preload_before_replica`` with a cluster and a redis-/valkey-benchmark
client beside other clients are refused at run time with the reason, before any server
starts.
"""

from __future__ import annotations

from kvperf.analysis.comparison import GroupKey
from kvperf.core.errors import DriverError
from kvperf.core.kinds import Measure
from kvperf.definitions.client import MEMTIER
from kvperf.definitions.plan import Plan
from kvperf.definitions.pubsub import PUBSUB
from kvperf.driver.benchmark_run import BenchmarkToolRun
from kvperf.driver.memtier import MemtierDriver
from kvperf.pipeline.request.options import DefinitionOptions
from kvperf.pipeline.run.definition_work import (
    DefinitionRun,
    DefinitionWork,
    definition_test,
    file_slug,
    pinning,
)
from kvperf.pipeline.run.prepare import validate_label
from kvperf.pipeline.run.profiling import check_settings
from kvperf.results.row import RunContext
from kvperf.server.binary import resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.store.snapshots import SnapshotCache

__all__ = ["DefinitionOptions", "DefinitionRun", "DefinitionWork", "benchmark_tools",
           "definition_series", "file_slug", "pinning", "prepare_definitions", "unsupported"]


Tools = dict[str, BenchmarkToolRun | str]  # redis-/valkey-benchmark found, or why not


def unsupported(plan: Plan, tools: Tools | None = None) -> str | None:
    """Why this stage cannot execute ``plan`` (its dry run still plans it), or None.
    ``tools``: the redis-/valkey-benchmark runs found (or why not), by tool name."""
    topology = plan.topology
    if not plan.clients:
        return "the definition has no client to run"
    if topology.replicas and topology.cluster and plan.replica_after_preload:
        return (f"topology {topology.name}: preload_before_replica with a cluster's replicas "
                "is not run by kvperf yet (they join the cluster before the preload)")
    others = [c for c in plan.clients if c.tool not in (MEMTIER, PUBSUB)]
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


def benchmark_tools(plans: tuple[Plan, ...]) -> Tools:
    tools: Tools = {}
    for name in {c.tool for p in plans for c in p.clients if c.tool not in (MEMTIER, PUBSUB)}:
        try:
            tools[name] = BenchmarkToolRun.find(name)
        except DriverError as exc:
            tools[name] = str(exc)
    return tools


def prepare_definitions(plans: tuple[Plan, ...], options: DefinitionOptions) -> DefinitionRun:
    """Find the server and memtier (UsageError/DriverError before any server starts)."""
    check_settings(options.profile, client_mode=False)
    binary = resolve(options.server_bin)
    driver = MemtierDriver.find(options.kvload)
    label = validate_label(options.label or binary.label)
    env = {**host_facts(), "tool": f"{driver.name} {driver.version}",
           "server_binary": str(binary.path), "server_source": binary.source}
    context = RunContext(label, options.commit, driver.name, driver.version, binary.label, env,
                         Measure.TIMING)
    tools = benchmark_tools(plans)
    runnable = tuple(p for p in plans if unsupported(p, tools) is None)
    refused = tuple((p, why) for p in plans if (why := unsupported(p, tools)) is not None)
    found = {k: v for k, v in tools.items() if isinstance(v, BenchmarkToolRun)}
    if found:
        env["benchmark_tools"] = {k: f"{v.version} {v.path}" for k, v in found.items()}
    snapshots = options.snapshots
    cache = (SnapshotCache(snapshots.directory, snapshots.max_bytes)
             if snapshots.directory is not None else None)
    return DefinitionRun(runnable, refused, driver, binary, context,
                         options.results_dir / label, available_cpus(), found, options.profile,
                         kvload=options.kvload, snapshots=cache,
                         reuse=options.reuse_servers)


def definition_series(plan: Plan) -> GroupKey:
    """The series fields (describe_group's) a definition's test rows will have."""
    test = definition_test(plan)
    return (("command", test.name), ("data_size", None), ("pipeline", None),
            ("clients", None), ("io_threads", test.io_threads),
            ("cluster_mode", test.cluster), ("tls", False))
