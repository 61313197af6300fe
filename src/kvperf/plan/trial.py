"""A trial: one command measured once with one parameter set on a fresh server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

from kvperf.config.commands import CommandSpec
from kvperf.config.faults import Fault
from kvperf.config.model import ModuleSpec, ProfileParams, ProfileSettings
from kvperf.config.staircase import Staircase
from kvperf.core.cpus import format_cpu_list
from kvperf.core.identity import stable_id


@dataclass(frozen=True)
class ServerSetup:
    """Everything that decides how the server is started (trials sharing it are comparable)."""

    cluster_mode: bool
    tls: bool
    io_threads: int | None
    cluster_nodes: int
    cpus: tuple[int, ...] | None
    custom_configs: tuple[tuple[str, str], ...]
    config_set: tuple[tuple[str, str], ...]
    modules: tuple[ModuleSpec, ...]
    replicas: int = 0  # per primary: each cluster primary's, or the standalone primary's

    @property
    def node_count(self) -> int:
        """The primaries (replicas come on top: ``replicas`` × this)."""
        return self.cluster_nodes if self.cluster_mode else 1


@dataclass(frozen=True)
class Load:
    """Everything that decides what the load tool sends."""

    command: CommandSpec
    data_size: int
    pipeline: int
    clients: int
    keyspacelen: int
    requests: int | None
    duration: float | None
    warmup: int
    threads: int | None
    cpus: tuple[int, ...] | None
    rps: float | None = None  # open loop: target requests/s (a rate sweep's point)
    arrivals: str | None = None  # the open loop's send times: "poisson" or "uniform"
    settle: float = 0.0  # seconds of load inside the measured run before it counts (kvload)
    read_from_replicas: str = "no"  # valkey-benchmark's --rfr: no, yes (replicas), all
    staircase: Staircase | None = None  # connections ramped up to ``clients`` (kvload)
    faults: tuple[Fault, ...] = ()  # run during the measure stage (config "faults")
    # how keys and values are drawn (config/workload.py's texts; the defaults are today's
    # uniform keys, fixed ``data_size`` printable values, no TTL)
    key_distribution: str = "uniform"
    value_size: str | None = None  # a value-size distribution (data_size: its largest)
    value_content: str = "random"
    ttl: str = "none"

    def workload(self) -> dict[str, str]:
        """The distributions that differ from the defaults, by config key (what a trial's
        identity, its row's series and its plan line show)."""
        shown = {"key_distribution": self.key_distribution, "value_sizes": self.value_size,
                 "value_content": self.value_content, "ttl": self.ttl}
        defaults = {"key_distribution": "uniform", "value_sizes": None,
                    "value_content": "random", "ttl": "none"}
        return {k: v for k, v in shown.items() if v is not None and v != defaults[k]}


class TrialParams(TypedDict):
    """What identifies a trial's series (``Trial.params``, hashed into its id); the
    optional keys are there only when set, so trials without them keep their ids."""

    command: str
    data_size: int
    pipeline: int
    clients: int
    keyspacelen: int
    requests: int | None
    duration: float | None
    warmup: int
    benchmark_threads: int | None
    cluster_mode: bool
    tls: bool
    io_threads: int | None
    cluster_nodes: int | None
    config_set: dict[str, str]
    custom_server_configs: dict[str, str]
    modules: list[str]
    server_cpus: str | None
    client_cpus: str | None
    profile: NotRequired[ProfileParams]
    rps: NotRequired[float]
    arrivals: NotRequired[str | None]
    replicas: NotRequired[int]
    read_from_replicas: NotRequired[str]
    staircase: NotRequired[dict[str, int]]
    faults: NotRequired[list[str]]
    workload: NotRequired[dict[str, str]]


@dataclass(frozen=True)
class Trial:
    """One planned measurement. ``id`` is a hash of its parameters (not of ``run``)."""

    index: int
    run: int
    spec_index: int
    server: ServerSetup
    load: Load
    profile: ProfileSettings | None = None  # from the config's profiling_sets

    @property
    def id(self) -> str:
        return stable_id(self.params())

    def params(self) -> TrialParams:
        """The parameters that identify this trial's series (everything but ``run``)."""
        s, ld = self.server, self.load
        params: TrialParams = {
            "command": ld.command.name, "data_size": ld.data_size, "pipeline": ld.pipeline,
            "clients": ld.clients, "keyspacelen": ld.keyspacelen, "requests": ld.requests,
            "duration": ld.duration, "warmup": ld.warmup, "benchmark_threads": ld.threads,
            "cluster_mode": s.cluster_mode, "tls": s.tls, "io_threads": s.io_threads,
            "cluster_nodes": s.cluster_nodes if s.cluster_mode else None,
            "config_set": dict(s.config_set), "custom_server_configs": dict(s.custom_configs),
            "modules": [m.path for m in s.modules],
            "server_cpus": format_cpu_list(s.cpus) if s.cpus else None,
            "client_cpus": format_cpu_list(ld.cpus) if ld.cpus else None,
        }
        if self.profile:
            params["profile"] = self.profile.params()
        if ld.rps:
            params["rps"], params["arrivals"] = ld.rps, ld.arrivals
        if s.replicas:
            params["replicas"] = s.replicas
        if ld.read_from_replicas != "no":
            params["read_from_replicas"] = ld.read_from_replicas
        if ld.staircase:
            params["staircase"] = ld.staircase.params()
        if ld.faults:
            params["faults"] = [f.text() for f in ld.faults]
        if ld.workload():
            params["workload"] = ld.workload()
        return params

    def describe(self) -> str:
        """A one-line human description for progress and logs."""
        ld, s = self.load, self.server
        bound = f"n={ld.requests}" if ld.requests else f"{ld.duration}s"
        if ld.rps:
            bound += f" at {ld.rps:,.0f} rps"
        extras = [x for x, on in (("cluster", s.cluster_mode), ("tls", s.tls)) if on]
        if s.io_threads:
            extras.append(f"io{s.io_threads}")
        if s.replicas:
            extras.append(f"{s.replicas} replica(s) each")
        if ld.read_from_replicas != "no":
            extras.append(f"reads from replicas: {ld.read_from_replicas}")
        if ld.staircase:
            extras.append(f"staircase {ld.staircase.start}+{ld.staircase.step} every "
                          f"{ld.staircase.step_seconds}s")
        if ld.faults:
            extras.append("faults: " + ", ".join(f.text() for f in ld.faults))
        extras += [f"{k}={v}" for k, v in ld.workload().items()]
        if self.profile:
            extras.append(f"profiled {self.profile.mode}")
        tail = f" [{' '.join(extras)}]" if extras else ""
        return (f"{ld.command.name} d={ld.data_size} P={ld.pipeline} c={ld.clients} "
                f"{bound} run {self.run}{tail}")
