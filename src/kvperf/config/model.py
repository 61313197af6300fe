"""Typed benchmark specifications: one BenchmarkSpec per object of the config list.

Lists inside an object are cross-multiplied by the plan; objects are never crossed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from kvperf.config.commands import CommandSpec
from kvperf.config.faults import Fault
from kvperf.config.rate_sweep import RateSweep
from kvperf.config.staircase import Staircase
from kvperf.config.workload import Bucket
from kvperf.core.kinds import Concurrency, ProfileMode


class ProfileParams(TypedDict):
    """What a trial's identity records of its profiling (``ProfileSettings.params``)."""

    mode: str
    frequency: int
    call_graph: str
    delay: float
    duration: float | None


@dataclass(frozen=True)
class ProfileSettings:
    """How a trial's servers are profiled (``--profile`` or a config's ``profiling_sets``)."""

    frequency: int = 999  # Hz of perf's cpu-clock sampling (the seed's ``sampling_freq``)
    call_graph: str = "fp"  # "fp" (frame pointers) or "dwarf"
    mode: ProfileMode = ProfileMode.CPU
    delay: float = 0.0  # seconds into the measure stage before sampling starts
    duration: float | None = None  # seconds sampled (None: to the end of the measure stage)

    def params(self) -> ProfileParams:
        """What a trial's identity records of its profiling."""
        return {"mode": str(self.mode), "frequency": self.frequency,
                "call_graph": self.call_graph, "delay": self.delay,
                "duration": self.duration}


@dataclass(frozen=True)
class ModuleSpec:
    """A server module loaded at startup with ``--loadmodule path args…``."""

    path: str
    startup_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class BenchmarkSpec:
    """One validated config object. Tuples hold the values to cross-multiply."""

    index: int
    commands: tuple[CommandSpec, ...]
    requests: tuple[int, ...] | None = None
    duration: tuple[float, ...] | None = None  # seconds (quick mode's are 0.5)
    keyspacelen: tuple[int, ...] = (100_000,)
    data_sizes: tuple[int, ...] = (3,)
    pipelines: tuple[int, ...] = (1,)
    clients: tuple[int, ...] = (50,)
    cluster_mode: tuple[bool, ...] = (False,)
    tls_mode: tuple[bool, ...] = (False,)
    warmup: tuple[int, ...] = (0,)
    io_threads: tuple[int | None, ...] = (None,)
    benchmark_threads: tuple[int | None, ...] = (None,)
    server_cpus: tuple[int, ...] | None = None
    client_cpus: tuple[int, ...] | None = None
    config_sets: tuple[tuple[tuple[str, str], ...], ...] = ((),)
    custom_server_configs: tuple[tuple[str, str], ...] = ()
    modules: tuple[ModuleSpec, ...] = field(default=())
    cluster_nodes: int = 3
    profiling: tuple[ProfileSettings | None, ...] = (None,)  # profiling_sets (None: not profiled)
    gates: tuple[str, ...] = ()  # KPI gates as written (analysis/gates.py parses them)
    # client harnesses' concurrency models (kvperf run --client; () = by clients: single
    # for 1, else pool)
    concurrency: tuple[Concurrency, ...] = ()
    faults: tuple[Fault, ...] = ()  # "faults": a fault schedule (config/faults.py)
    rate_sweep: RateSweep | None = None  # "rate_sweep": each series swept (config/rate_sweep)
    replicas: int = 0  # "replicas": per primary (cluster: each of cluster_nodes), in sync
    read_from_replicas: tuple[str, ...] = ("no",)  # where read commands go: no, yes, all
    staircase: Staircase | None = None  # "staircase": each trial ramps its connections
    # key and value distributions (config/workload.py), each a sweepable list
    key_distribution: tuple[str, ...] = ("uniform",)
    value_sizes: tuple[tuple[Bucket, ...], ...] | None = None  # None: data_sizes
    value_content: tuple[str, ...] = ("random",)
    ttl: tuple[str, ...] = ("none",)

    @property
    def bounds(self) -> tuple[tuple[str, float], ...]:
        """The run-length choices: ("requests", n) or ("duration", seconds) each."""
        if self.requests is not None:
            return tuple(("requests", n) for n in self.requests)
        assert self.duration is not None
        return tuple(("duration", s) for s in self.duration)
