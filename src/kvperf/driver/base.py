"""The driver interface every load tool adapter implements, and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kvperf.core.jsontypes import JsonObject
from kvperf.plan.trial import Load
from kvperf.server.resp import Endpoint


@dataclass(frozen=True)
class Capabilities:
    """What a tool, at the version found, can do itself."""

    duration: bool = False  # --duration: time-bounded runs
    warmup: bool = False  # --warmup inside the measured run
    rps: bool = False  # --rps: open-loop rate
    sequential: bool = False  # --sequential key order
    threads: bool = True  # --threads
    tls: bool = True
    cluster: bool = True
    cluster_plain_keys: bool = False  # routes plain (untagged) keys to the owning node
    data_placeholder: bool = False  # expands __data__ in custom commands
    sequences: bool = False  # "A ; B" command sequences (mixes, MULTI/EXEC) in one request
    seed: bool = False  # --seed: a fixed random key sequence (instruction mode needs it)


@dataclass(frozen=True)
class Target:
    """Where the load goes."""

    endpoints: tuple[Endpoint, ...]  # the primaries
    cluster: bool
    tls_ca: Path | None = None
    replicas: tuple[Endpoint, ...] = ()  # replicas kvperf started beside them (all of them)

    @property
    def first(self) -> Endpoint:
        return self.endpoints[0]


@dataclass(frozen=True)
class Measurement:
    """One measured run of one command. Latencies in milliseconds."""

    rps: float
    avg_latency_ms: float
    min_latency_ms: float
    p50_latency_ms: float
    p95_latency_ms: float
    p99_latency_ms: float
    max_latency_ms: float
    requests: int | None = None
    extra: JsonObject = field(default_factory=dict)


class Driver(Protocol):
    """A load tool adapter. ``unsupported`` is checked for every trial before any server starts."""

    name: str
    version: str
    capabilities: Capabilities

    def unsupported(self, load: Load, cluster: bool, tls: bool) -> str | None:
        """Why this tool cannot run this load (naming option, tool, version, alternative)."""
        ...

    def warmup(self, load: Load, target: Target, seconds: int, log: Path) -> None:
        """Drive the same load for ``seconds``; nothing is measured."""
        ...

    def measure(self, load: Load, target: Target, log: Path) -> Measurement:
        """Run the measured load; raise DriverError if it measured nothing."""
        ...
