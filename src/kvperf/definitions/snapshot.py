"""A preload's identity for the dataset snapshot cache (store/snapshots.py), and why a plan
cannot use one (pure).

A snapshot is the server's RDB right after a definition's preload, before its init
commands: init always runs on the started server, so what it does outside the data
(``init_lua`` populating commandstats, CONFIG SET, SCRIPT LOAD) holds either way, and
definitions with one preload but different inits share it. The identity hashes what
determines that data: the preload's argv (the key range with it), the server settings that
shape it (encodings: ``*-max-listpack-*``, ``*-max-intset-*``, ``list-compress-depth``,
stream node sizes; ``maxmemory*``, which evicts during a preload), the server's product and
major.minor version (a release writes one RDB format; a server that cannot load a snapshot
falls back to a real preload), the topology's primaries and the preload tool
(memtier_benchmark or kvload memtier).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvperf.core.identity import stable_id
from kvperf.definitions import memtier
from kvperf.definitions.client import MEMTIER
from kvperf.definitions.plan import Plan

FORMAT = 1  # bump when what a snapshot holds or how it is identified changes
_DATA_SETTING = re.compile(
    r"max-(listpack|ziplist|intset)|compress-depth|stream-node-max|^maxmemory|^lfu-")


@dataclass(frozen=True)
class SnapshotKey:
    """A preload's identity (``id``, 16 hex) and the inputs it hashes, for the sidecar."""

    id: str
    preload: tuple[str, ...]
    settings: tuple[tuple[str, str], ...]
    server: str
    primaries: int
    tool: str = ""


def data_settings(config: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The server settings that shape a preload's data, sorted by name (last one wins)."""
    found = {name.lstrip("-").lower(): value for name, value in config
             if _DATA_SETTING.search(name.lstrip("-").lower())}
    return tuple(sorted(found.items()))


def release(version: str) -> str:
    """``8.1.1`` → ``8.1`` (a release line writes one RDB format)."""
    return ".".join(version.split(".")[:2])


def snapshot_key(plan: Plan, product: str, version: str, tool: str = "") -> SnapshotKey:
    """The identity of ``plan``'s preload on a server of ``product`` ``version``, run by
    ``tool`` (memtier_benchmark or kvload's front end: each draws its own values)."""
    assert plan.preload is not None
    settings = data_settings(plan.server_config)
    server = f"{product} {release(version)}"
    inputs = {"format": FORMAT, "preload": list(plan.preload.argv),
              "settings": [list(pair) for pair in settings], "server": server,
              "primaries": plan.topology.primaries, **({"tool": tool} if tool else {})}
    return SnapshotKey(stable_id(inputs, 16), plan.preload.argv, settings, server,
                       plan.topology.primaries, tool)


def snapshot_refusal(plan: Plan) -> str | None:
    """Why ``plan`` preloads for real every time, or None when a snapshot may replace its
    preload."""
    preload = plan.preload
    if preload is None:
        return "no preload"
    if plan.topology.cluster:
        return "cluster topology (one RDB per node and its slots: not snapshotted)"
    if plan.dataset is not None:
        return "the definition loads its own RDB dataset"
    if dict(data_settings_all(plan.server_config)).get("appendonly", "no") == "yes":
        return "appendonly yes (the server loads its AOF, not an RDB, at start)"
    if preload.tool == MEMTIER:
        expiry = memtier.value(memtier.parse(list(preload.argv)), "expiry-range")
        if expiry and expiry not in ("0-0", "0"):
            return (f"the preload sets TTLs (--expiry-range {expiry}): an RDB keeps absolute "
                    "expiry times")
    return None


def data_settings_all(config: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Every setting by its plain lower-case name (last one wins)."""
    return tuple({name.lstrip("-").lower(): value.lower() for name, value in config}.items())


def reuse_refusal(plan: Plan) -> str | None:
    """Why a test of ``plan`` always gets a fresh server (pure): no server kept from the
    test before it, none kept for the next (``run --definitions``' server reuse,
    pipeline/run/definition_work.py); None when it may run on a kept one whose data is
    the snapshot's. Kept simple and safe: only standalone primaries without replicas,
    without persistence, whose test neither saves nor reloads its dataset."""
    refused = snapshot_refusal(plan)
    if refused is not None:
        return f"no dataset snapshot ({refused})"
    if plan.topology.replicas:
        return "replicas (not reused)"
    settings = dict(data_settings_all(plan.server_config))
    if settings.get("save", "").strip("\"' ") or settings.get("appendonly") == "yes":
        return "a save schedule or AOF (a background save would hide a change to the data)"
    dbconfig = plan.definition.dbconfig
    if plan.save_first or plan.flush_first or dbconfig.rdb_checks or dbconfig.wait_for_bgsave:
        return "the test saves or reloads its dataset"
    return None


def run_order(plans: tuple[Plan, ...]) -> tuple[Plan, ...]:
    """``plans`` in the order ``run --definitions`` runs them (pure): a stable sort by
    server spec (topology, server configuration), then preload, so that tests which may
    share a server (reuse_refusal) come one after another."""
    return tuple(sorted(plans, key=_order))


def _order(plan: Plan) -> tuple[str, str, str]:
    preload = plan.preload.argv if plan.preload is not None else ()
    return (plan.topology.name, repr(plan.server_config), repr((plan.topology, preload)))
