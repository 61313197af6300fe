"""Topologies (the corpus' "setups"): how many primaries and replicas, and server arguments.

``BUILTIN`` is kvperf's copy of redis-benchmarks-specification 0.3.47's
``setups/topologies/topologies.yml`` (tests check the two agree entry by entry). A
``defaults.yml`` with ``spec.setups`` (redisbench-admin's way, the same layout) adds or
replaces entries; ``parse_setups`` reads that layout. ``redis_arguments`` become server
arguments after the definition's own configuration parameters (order matters: the corpus
runner passes them in that order, and ``save`` accumulates, see ``-rdb``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from kvperf.core.errors import ConfigError
from kvperf.definitions.model import Resources

STANDALONE = "oss-standalone"
CLUSTER = "oss-cluster"
KINDS = (STANDALONE, CLUSTER)
# Server arguments of the corpus' setups kvperf cannot start with, and why.
UNSUPPORTED_ARGS = {
    "loadmodule": "loads a module",
    "proactor_threads": "is a Dragonfly option, not a Valkey/Redis one",
}


@dataclass(frozen=True)
class Topology:
    name: str
    kind: str  # oss-standalone | oss-cluster
    primaries: int = 1
    replicas: int = 0
    server_args: tuple[tuple[str, str], ...] = ()  # ("io-threads", "4"), ("save", "10 1000")
    placement: str | None = None
    resources: Resources | None = None

    @property
    def cluster(self) -> bool:
        return self.kind == CLUSTER

    @property
    def io_threads(self) -> int:
        return int(dict(self.server_args).get("io-threads", "1"))

    @property
    def persistence(self) -> str:
        """none, rdb (a save schedule), aof-<fsync> (appendonly) as this topology sets it."""
        args = dict(self.server_args)
        if args.get("appendonly") == "yes":
            return f"aof-{args.get('appendfsync', 'everysec')}"
        return "rdb" if args.get("save") else "none"

    def unsupported(self) -> str | None:
        """Why kvperf cannot start this topology, or None."""
        for key, value in self.server_args:
            if key in UNSUPPORTED_ARGS:
                return f"topology {self.name}: --{key} {value} {UNSUPPORTED_ARGS[key]}"
        return None

    def describe(self) -> str:
        parts = [f"{self.primaries} primar{'y' if self.primaries == 1 else 'ies'}"]
        if self.cluster:
            parts[0] = f"cluster of {parts[0]}"
        if self.replicas:
            parts.append(f"{self.replicas} replica{'s' if self.replicas > 1 else ''}")
        if self.io_threads > 1:
            parts.append(f"{self.io_threads} io-threads")
        if self.persistence != "none":
            parts.append(self.persistence)
        return ", ".join(parts)


def server_args(text: str) -> tuple[tuple[str, str], ...]:
    """``--io-threads 4 --save 10 1000`` → (("io-threads", "4"), ("save", "10 1000"))."""
    pairs: list[tuple[str, list[str]]] = []
    for word in shlex.split(text):
        if word.startswith("--"):
            pairs.append((word[2:], []))
        elif pairs:
            pairs[-1][1].append(word)
        else:
            raise ValueError(f"{word!r} does not follow an --option")
    return tuple((key, " ".join(values)) for key, values in pairs)


# name, kind, primaries, replicas, redis_arguments, cpus, memory, placement
_TABLE: tuple[tuple[str, str, int, int, str, str, str, str | None], ...] = (
    ("oss-standalone", STANDALONE, 1, 0, "", "1", "10g", None),
    ("oss-standalone-with-redisearch", STANDALONE, 1, 0,
     "--loadmodule /mnt/redis/redisearch.so", "1", "10g", None),
    *((f"oss-standalone-{n:02d}-io-threads", STANDALONE, 1, 0,
       f"--io-threads {n} --io-threads-do-reads yes", str(n + 1), "10g", None)
      for n in (2, 4, 8, 12, 16, 32, 64)),
    *((f"dragonfly-{n:02d}-proactor-threads", STANDALONE, 1, 0, f"--proactor_threads {n}",
       str(n if n == 1 else n + 1), "10g", None) for n in (1, 2, 4, 8, 12, 16, 32, 64)),
    ("oss-standalone-01-replicas", STANDALONE, 1, 1, "", "2", "20g", "sparse"),
    ("oss-standalone-02-replicas", STANDALONE, 1, 2, "", "3", "30g", "sparse"),
    ("oss-standalone-01-replicas-rdb", STANDALONE, 1, 1, "--save 10 1000", "2", "20g",
     "sparse"),
    ("oss-standalone-01-replicas-aof-everysec", STANDALONE, 1, 1,
     "--appendonly yes --appendfsync everysec", "2", "20g", "sparse"),
    *((f"oss-standalone-01-replicas-{n:02d}-io-threads", STANDALONE, 1, 1,
       f"--io-threads {n} --io-threads-do-reads yes", str(2 * n + 2), "20g", None)
      for n in (2, 4, 8, 16)),
    *((f"oss-cluster-{n}-primaries", CLUSTER, n, 0, "", str(10 if n == 9 else n),
       f"{10 * n}g", "sparse") for n in (3, 5, 9, 15, 30)),
)

BUILTIN: dict[str, Topology] = {
    name: Topology(name, kind, primaries, replicas, server_args(args), placement,
                   Resources(cpus, memory))
    for name, kind, primaries, replicas, args, cpus, memory, placement in _TABLE
}


def _setup(index: int, raw: Any) -> Topology:
    where = f"spec.setups[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"{where}: a setup is a map with a name")
    shape = raw.get("redis_topology") or {}
    kind = raw.get("type", STANDALONE)
    if kind not in KINDS or not isinstance(shape, dict):
        raise ConfigError(f"{where} ({raw['name']}): type must be one of {', '.join(KINDS)}")
    try:
        args = server_args(str(raw.get("redis_arguments") or ""))
        primaries, replicas = int(shape.get("primaries", 1)), int(shape.get("replicas", 0))
    except ValueError as exc:
        raise ConfigError(f"{where} ({raw['name']}): {exc}") from None
    requests = (raw.get("resources") or {}).get("requests") or {}
    resources = Resources(requests.get("cpus"), requests.get("memory")) if requests else None
    return Topology(raw["name"], kind, primaries, replicas, args, shape.get("placement"),
                    resources)


def parse_setups(raw: Any, source: str) -> dict[str, Topology]:
    """A topologies file's ``spec.setups`` (ConfigError naming ``source`` when malformed)."""
    setups = (raw.get("spec") or {}).get("setups") if isinstance(raw, dict) else None
    if not isinstance(setups, list):
        raise ConfigError(f"{source}: expected spec.setups, a list of topologies")
    try:
        return {topology.name: topology
                for topology in (_setup(i, item) for i, item in enumerate(setups))}
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
