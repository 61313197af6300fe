"""Definition × topology → a ``Plan`` (pure data for the runner) or a ``Refusal`` (pure).

A plan is everything a run needs, decided before any server starts: the server's startup
configuration (the definition's ``configuration-parameters`` then the topology's
arguments), the topology, a local dataset, the preload run, init commands and Lua, the
keyspace length to verify, the clients with ``--test-time`` overridden, KPI bounds and the
exporter's metric paths. What a definition asks for that kvperf cannot do yields a refusal
whose reason names the thing (a tool, an option, a topology, a URL); the first reason
found is given. Given the ``Machine``, a test whose memory requests do not fit it is
refused too (definitions/resources.py); without one (``--ignore-resources``) the requests
are only recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from kvperf.definitions import memtier, pubsub
from kvperf.definitions.client import MEMTIER, TOOLS, ClientError, ClientPlan, capped, plan_client
from kvperf.definitions.kpis import Kpi
from kvperf.definitions.model import Definition, ToolConfig
from kvperf.definitions.resources import Machine, Needs, cpu_note, misfit, needs
from kvperf.definitions.topology import Topology

KNOWN_CAPABILITIES = frozenset({"local-disk"})  # a kvperf host runs servers on local disk
URL_SCHEMES = ("http://", "https://", "s3://", "ftp://", "gs://")
UNCAPPED = "request-bound client: --override-test-time does not apply to it"


@dataclass(frozen=True)
class Plan:
    definition: Definition
    topology: Topology
    server_config: tuple[tuple[str, str], ...]
    dataset: Path | None
    preload: ClientPlan | None
    clients: tuple[ClientPlan, ...]
    test_time_override: int | None = None
    notes: tuple[str, ...] = ()
    save_first: bool = False  # SAVE before measuring: the clients reload the file on disk
    flush_first: bool = False  # then FLUSHALL SYNC: they load it into an empty database

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def init_commands(self) -> tuple[tuple[str, ...], ...]:
        return self.definition.dbconfig.init_commands

    @property
    def init_lua(self) -> tuple[str, ...]:
        return self.definition.dbconfig.init_lua

    @property
    def keyspacelen(self) -> int | None:
        return self.definition.dbconfig.check_keyspacelen

    @property
    def kpis(self) -> tuple[Kpi, ...]:
        return self.definition.kpis

    @property
    def metrics(self) -> tuple[str, ...]:
        exporter = self.definition.exporter
        return exporter.metrics if exporter else ()

    @property
    def replica_after_preload(self) -> bool:
        """Preload first, then start the replica (``preload_before_replica``); else the
        replica is in sync before preload and measurement."""
        return self.definition.dbconfig.preload_before_replica and self.topology.replicas > 0


@dataclass(frozen=True)
class Refusal:
    definition: Definition
    topology: str
    reason: str

    @property
    def name(self) -> str:
        return self.definition.name


def given_rdb(dataset: str, rdbs: Mapping[str, Path]) -> Path | None:
    """The local RDB ``--dataset-rdb NAME=PATH`` gives for a definition's ``dataset``:
    NAME is the dataset as written (a URL, a path) or its last path component."""
    return rdbs.get(dataset) or rdbs.get(dataset.rstrip("/").rsplit("/", 1)[-1])


def _definition_refusal(definition: Definition, rdbs: Mapping[str, Path]) -> str | None:
    fatal = definition.fatal
    if fatal:
        more = f" (+{len(fatal) - 1} more)" if len(fatal) > 1 else ""
        return f"{fatal[0]}{more}"
    for tool in definition.tools:
        if tool == pubsub.BCAST:
            return pubsub.BCAST_REFUSAL
        if tool not in TOOLS and tool != pubsub.SUBSCRIBER:
            return f"client tool {tool!r} is not supported (kvperf runs {', '.join(TOOLS)})"
    for capability in definition.required_capabilities:
        if capability not in KNOWN_CAPABILITIES:
            return f"requires runner capability {capability!r}"
    db = definition.dbconfig
    if db.module_configuration_parameters:
        return f"needs module(s) {', '.join(db.module_configuration_parameters)}"
    preload = db.preload_tool
    if preload is not None and preload.tool != MEMTIER:
        return f"preload tool {preload.tool!r} is not supported (kvperf preloads with " \
               f"{MEMTIER} through kvload memtier)"
    if (db.dataset and db.dataset.lower().startswith(URL_SCHEMES)
            and given_rdb(db.dataset, rdbs) is None):
        name = db.dataset.rstrip("/").rsplit("/", 1)[-1]
        return (f"dataset {db.dataset} is a URL (nothing downloads at run time): download "
                f"it and give it with --dataset-rdb {name}=PATH")
    return None


def _dataset(definition: Definition, rdbs: Mapping[str, Path]) -> Path | None:
    dataset = definition.dbconfig.dataset
    if not dataset:
        return None
    given = given_rdb(dataset, rdbs)
    if given is not None:
        return given
    path = Path(dataset).expanduser()
    return path if path.is_absolute() else definition.source.parent / path


def _notes(definition: Definition, topology: Topology, clients: tuple[ClientPlan, ...],
           override: int | None, machine: Machine | None, asked: Needs) -> tuple[str, ...]:
    db = definition.dbconfig
    notes = [f"warning: {issue}" for issue in definition.warnings]
    if override is not None and any(not c.test_time_overridden for c in clients):
        notes.append(UNCAPPED)
    checks = db.rdb_checks
    if checks is not None and checks.operation == "load" and checks.keyspacelen is not None:
        notes.append(f"rdb_checks (load): keyspacelen {checks.keyspacelen} checked after "
                     "measuring (DBSIZE); sample keys and value sizes not verified")
    elif checks is not None:
        notes.append(f"rdb_checks ({checks.operation}) recorded, not verified")
    if db.wait_for_bgsave:
        notes.append("wait_for_bgsave: waits for BGSAVE to finish before measuring")
    if db.preload_before_replica and topology.replicas:
        notes.append("preload before the replica starts (preload_before_replica)")
    resources = [f"{who} {res}" for who, res in
                 [("server", db.resources), ("topology", topology.resources),
                  *((c.tool, c.resources) for c in clients)] if res is not None]
    if resources and machine is None:
        notes.append("resources not checked (--ignore-resources): " + "; ".join(resources))
    elif resources:
        notes.append("resources: " + "; ".join(resources))
    crowded = cpu_note(asked, machine) if machine is not None else None
    if crowded:
        notes.append(crowded)
    return tuple(notes)


def _reloads(clients: tuple[ClientPlan, ...]) -> list[tuple[str, ...]]:
    """The clients' ``DEBUG RELOAD`` commands (memtier's ``--command``)."""
    found = []
    for client in clients:
        if client.tool == MEMTIER:
            found += [c for c in memtier.commands(memtier.parse(list(client.argv)))
                      if c[:2] == ("DEBUG", "RELOAD")]
    return found


def disk_steps(definition: Definition, clients: tuple[ClientPlan, ...]) -> tuple[bool, bool]:
    """(save, flush) before the measure stage. A ``DEBUG RELOAD NOSAVE`` reloads the RDB
    file on disk without writing it first, and ``rdb_checks`` operation ``load`` times such a
    reload of the preloaded dataset, so kvperf saves it first (SAVE; not when an init
    command already does) — as the corpus runner's RDB datasets are on disk before the test.
    ``NOFLUSH`` loads into the database as it is, and a key loaded twice stops the server
    ("Duplicated key found in RDB file"), so it is emptied first (FLUSHALL SYNC), as the
    corpus runner's load setup does."""
    reloads = _reloads(clients)
    checks = definition.dbconfig.rdb_checks
    saved = any(command[:1] and command[0].upper() == "SAVE"
                for command in definition.dbconfig.init_commands)
    needs_file = any("NOSAVE" in r for r in reloads) or (
        checks is not None and checks.operation == "load")
    flush = any("NOFLUSH" in r and "MERGE" not in r for r in reloads)
    return needs_file and not saved, flush


def _needs(definition: Definition, topology: Topology, clients: tuple[ClientPlan, ...],
           preload: ClientPlan | None) -> Needs:
    return needs(definition.dbconfig.resources, topology.resources, 1 + topology.replicas,
                 [(c.tool, c.resources) for c in clients],
                 [(preload.tool, preload.resources)] if preload else [])


def _disk_notes(save: bool, flush: bool) -> tuple[str, ...]:
    notes = ["SAVE after preload and init: the clients reload the RDB file on disk"] \
        if save else []
    if flush:
        notes.append("FLUSHALL SYNC before measuring: DEBUG RELOAD NOFLUSH loads into an "
                     "empty database")
    return tuple(notes)


def _run(config: ToolConfig, cluster: bool, override: int | None, what: str) -> ClientPlan:
    try:
        return plan_client(config, cluster, override)
    except ClientError as exc:
        raise ClientError(f"{what}: {exc}") from None


def _pubsub_client(definition: Definition, override: int | None
                   ) -> tuple[ClientPlan, tuple[str, ...]]:
    """The memtier publisher and pubsub-sub-bench subscribers as one kvload pubsub run
    (definitions/pubsub.py), with the mapping's notes; ClientError when unmappable."""
    try:
        mapped = pubsub.plan_pubsub(definition.clients, override)
    except pubsub.PubsubError as exc:
        raise ClientError(str(exc)) from None
    subscriber = next(c for c in definition.clients if c.tool == pubsub.SUBSCRIBER)
    client = ClientPlan(pubsub.PUBSUB, mapped.argv, mapped.test_time, None, mapped.overridden,
                        None, subscriber.resources)
    return client, ("publisher (memtier_benchmark) and subscribers (pubsub-sub-bench) run "
                    "as one kvload pubsub", *mapped.notes)


def _clients(definition: Definition, cluster: bool, override: int | None
             ) -> tuple[tuple[ClientPlan, ...], tuple[str, ...]]:
    if pubsub.uses_pubsub(definition.tools):
        if cluster:
            raise ClientError("pub/sub on a cluster topology is not mapped (kvload pubsub "
                              "connects to one node)")
        client, notes = _pubsub_client(definition, override)
        return (client,), notes
    return tuple(_run(c, cluster, override, "client") for c in definition.clients), ()


def _no_file(_: Path) -> bool:
    return True


def plan_one(definition: Definition, topology_name: str, topologies: dict[str, Topology],
             override: int | None, file_exists: Callable[[Path], bool] = _no_file,
             machine: Machine | None = None, rdbs: Mapping[str, Path] | None = None
             ) -> Plan | Refusal:
    """The plan of ``definition`` on one topology, or the reason there is none.
    ``file_exists`` checks a local dataset (the caller's I/O; by default none is checked);
    ``machine``: what the memory requests must fit (None: not checked); ``rdbs``: local
    RDBs given for datasets by name (``given_rdb``)."""
    why = _definition_refusal(definition, rdbs or {})
    dataset = _dataset(definition, rdbs or {})
    if why is None and dataset is not None and not file_exists(dataset):
        why = f"dataset {dataset} not found"
    topology = topologies.get(topology_name)
    if why is None and topology is None:
        why = f"topology {topology_name!r} is not in the topologies table"
    if why is None and topology is not None:
        why = topology.unsupported()
    if why is not None or topology is None:
        return Refusal(definition, topology_name, why or "")
    db = definition.dbconfig
    try:
        preload = None if db.preload_tool is None else _run(
            db.preload_tool, topology.cluster, None, "preload")
        clients, mapped = _clients(definition, topology.cluster, override)
    except ClientError as exc:
        return Refusal(definition, topology_name, str(exc))
    asked = Needs()
    if machine is not None:
        try:
            asked = _needs(definition, topology, clients, preload)
        except ValueError as exc:  # a quantity that is not one
            return Refusal(definition, topology_name, f"resources: {exc}")
        too_big = misfit(asked, machine)
        if too_big:
            return Refusal(definition, topology_name, too_big)
    save, flush = disk_steps(definition, clients)
    return Plan(definition, topology, db.configuration_parameters + topology.server_args,
                dataset, preload, clients, override,
                mapped + _notes(definition, topology, clients, override, machine, asked)
                + _disk_notes(save, flush), save, flush)


def plan_all(definitions: tuple[Definition, ...], topologies: dict[str, Topology],
             override: int | None, only_topologies: tuple[str, ...] = (),
             file_exists: Callable[[Path], bool] = _no_file,
             machine: Machine | None = None, rdbs: Mapping[str, Path] | None = None
             ) -> tuple[Plan | Refusal, ...]:
    """Every definition on each of its topologies (those in ``only_topologies`` if given)."""
    return tuple(plan_one(definition, name, topologies, override, file_exists, machine, rdbs)
                 for definition in definitions for name in definition.topologies
                 if not only_topologies or name in only_topologies)


def cap_request_bound(planned: tuple[Plan | Refusal, ...], seconds: int
                      ) -> tuple[Plan | Refusal, ...]:
    """``--cap-request-bound``: each plan's request-bound memtier clients stop at their
    requests or ``seconds``, whichever comes first (``client.capped``; the preload stays
    whole); the plan's note says so. The capped argv is part of the series' identity."""
    out: list[Plan | Refusal] = []
    for plan in planned:
        if not isinstance(plan, Plan):
            out.append(plan)
            continue
        clients = tuple(capped(c, seconds) for c in plan.clients)
        whole = any(c.test_time is None and c.time_limit is None for c in clients)
        notes = [n for n in plan.notes if n != UNCAPPED or whole]  # still true, or gone
        if any(c.time_limit is not None for c in clients):
            notes.append(f"request-bound client capped at {seconds} s (--cap-request-bound):"
                         f" its requests or {seconds} s, whichever comes first")
        out.append(replace(plan, clients=clients, notes=tuple(notes)))
    return tuple(out)


def plans_of(planned: tuple[Plan | Refusal, ...]) -> tuple[Plan, ...]:
    return tuple(p for p in planned if isinstance(p, Plan))


def refusals_of(planned: tuple[Plan | Refusal, ...]) -> tuple[tuple[str, str, str], ...]:
    """(test, topology, why) of each plan the definitions stage refused."""
    return tuple((r.name, r.topology, r.reason) for r in planned if isinstance(r, Refusal))
