"""The metric catalogue: every metric kvperf judges, stores or charts, in one place.

Each entry says what a metric is measured in, which way is better, the family it is judged
with, and the smallest relative change worth reporting. analysis/ (verdicts, change points),
store/ (history's metric names), report/ and the docs read it; nothing else keeps a list of
metrics. Names are row paths: ``rps`` is a top-level field, ``server.cpu_us_per_request``
the ``cpu_us_per_request`` field of the row's ``server`` object.

A name outside the catalogue (an exporter metric of a definition, a column of a seed file)
is described by ``describe``: lower is better when the name says it is a cost (latency,
cpu, instructions, usec_per_call, or ``…_per_request``), and its minimum effect is that of
its family (latency 5%, the rest 2%).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["throughput", "latency", "cpu", "instructions", "memory", "other"]

# Minimum effects by family (fractions). Percentiles are noisier than means and counts,
# instruction counts under callgrind are deterministic to ~0.1%.
FAMILY_MIN_EFFECT: dict[Family, float] = {
    "throughput": 0.02, "latency": 0.05, "cpu": 0.02, "instructions": 0.005, "memory": 0.02,
    "other": 0.02}

_COST_TOKENS = ("latency", "cpu", "instructions", "usec_per_call")


@dataclass(frozen=True)
class Metric:
    """One metric: its row path, unit, direction, family, minimum effect, and a phrase."""

    name: str
    unit: str
    lower_is_better: bool
    family: Family
    text: str

    @property
    def min_effect(self) -> float:
        return FAMILY_MIN_EFFECT[self.family]


def _latency(name: str, what: str) -> Metric:
    return Metric(name, "ms", True, "latency", f"{what} latency")


LATENCY_FIELDS = ("avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms",
                  "p99_latency_ms", "max_latency_ms")

CATALOGUE: tuple[Metric, ...] = (
    Metric("rps", "requests/s", False, "throughput", "requests per second"),
    _latency("avg_latency_ms", "mean"), _latency("min_latency_ms", "minimum"),
    _latency("p50_latency_ms", "median"), _latency("p95_latency_ms", "95th percentile"),
    _latency("p99_latency_ms", "99th percentile"), _latency("max_latency_ms", "maximum"),
    Metric("server.cpu_us_per_request", "µs", True, "cpu",
           "server CPU time (user + system, all threads) per request"),
    Metric("server.usec_per_call", "µs", True, "cpu",
           "time inside the commands per call (INFO commandstats, the server's clock)"),
    Metric("client.client_cpu_us_per_request", "µs", True, "cpu",
           "the load generator's CPU time per request"),
)

# The server's memory (the row's ``memory`` object, format 6): after measuring (after
# seeding under --measure memory); bytes per key against the empty server.
MEMORY_METRICS: tuple[Metric, ...] = (
    Metric("memory.bytes_per_key", "B", True, "memory",
           "used_memory per key (with the keys − empty server) / keys"),
    Metric("memory.sample_bytes_per_key", "B", True, "memory",
           "MEMORY USAGE per key (a sample of ~200 random keys)"),
    Metric("memory.rss_bytes_per_key", "B", True, "memory", "RSS per key"),
    Metric("memory.used_memory", "B", True, "memory", "INFO used_memory"),
    Metric("memory.used_memory_dataset", "B", True, "memory", "INFO used_memory_dataset"),
    Metric("memory.used_memory_rss", "B", True, "memory", "INFO used_memory_rss"),
    Metric("memory.mem_fragmentation_ratio", "", True, "memory",
           "RSS / used_memory (fragmentation)"),
)
CATALOGUE += MEMORY_METRICS
BY_NAME = {m.name: m for m in CATALOGUE}

# Instruction mode (callgrind): judged per series from the rows' ``instructions`` object.
INSTRUCTION_METRICS: tuple[Metric, ...] = (
    Metric("total_per_request", "instructions", True, "instructions",
           "server instructions per request"),
    Metric("command_per_call", "instructions", True, "instructions",
           "instructions per call of the command's function (inclusive)"),
)

# What compare judges with --metrics rps | latency | all (the timing metrics).
METRIC_SETS: dict[str, tuple[str, ...]] = {
    "rps": ("rps",), "latency": LATENCY_FIELDS, "all": tuple(m.name for m in CATALOGUE),
    "memory": tuple(m.name for m in MEMORY_METRICS)}
TOP_METRICS = ("rps", *LATENCY_FIELDS)  # the row's own top-level metric fields


def describe(name: str) -> Metric:
    """The catalogue entry, or for another name the entry its name implies (module doc)."""
    if name in BY_NAME:
        return BY_NAME[name]
    lowered = name.lower()
    if "latency" in lowered:
        return Metric(name, "", True, "latency", name)
    cost = lowered.endswith("_per_request") or any(t in lowered for t in _COST_TOKENS)
    return Metric(name, "", cost, "cpu" if cost else "other", name)
