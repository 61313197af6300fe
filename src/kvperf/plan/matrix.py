"""Matrix expansion: specs × runs → an ordered list of trials (pure, no I/O).

Order: round-major (every trial of round 1, then round 2, …) so slow drift spreads evenly over
parameter sets instead of landing on the last ones; within a round, config objects in file order
and their lists crossed in a fixed key order with the command innermost; a config object's
``profiling_sets`` repeat all of its trials once per set (outermost).
"""

from __future__ import annotations

import itertools

from kvperf.config.commands import DATA, CommandSpec, Seed
from kvperf.config.model import BenchmarkSpec
from kvperf.config.workload import fixed_size, size_text
from kvperf.plan.trial import Load, ServerSetup, Trial


def _servers(spec: BenchmarkSpec) -> list[ServerSetup]:
    return [
        ServerSetup(cluster, tls, io, spec.cluster_nodes, spec.server_cpus,
                    spec.custom_server_configs, cset, spec.modules, spec.replicas)
        for cluster, tls, io, cset in itertools.product(
            spec.cluster_mode, spec.tls_mode, spec.io_threads, spec.config_sets)
    ]


def _sizes(spec: BenchmarkSpec) -> list[tuple[int, str | None]]:
    """(data_size, value-size distribution) per ``data_sizes`` or ``value_sizes`` value: a
    fixed size is a data_size (the same series as ``data_sizes``), a distribution's
    data_size its largest value."""
    if spec.value_sizes is None:
        return [(size, None) for size in spec.data_sizes]
    return [(fixed, None) if (fixed := fixed_size(b)) is not None
            else (max(x.hi for x in b), size_text(b)) for b in spec.value_sizes]


def _loads(spec: BenchmarkSpec) -> list[Load]:
    loads = []
    shapes: list[tuple[str, str, str]] = list(itertools.product(
        spec.key_distribution, spec.value_content, spec.ttl))
    for (size, sizes), pipe, clients, keys, bound, warm, threads, rfr in itertools.product(
        _sizes(spec), spec.pipelines, spec.clients, spec.keyspacelen, spec.bounds,
        spec.warmup, spec.benchmark_threads, spec.read_from_replicas,
    ):
        kind, amount = bound
        for (dist, content, ttl), cmd in itertools.product(shapes, spec.commands):
            shape, writes, sets = _values(cmd, sizes, content, ttl)
            loads.append(Load(cmd, size, pipe, clients, keys,
                              int(amount) if kind == "requests" else None,
                              amount if kind == "duration" else None,
                              warm, threads, spec.client_cpus, read_from_replicas=rfr,
                              staircase=spec.staircase, faults=spec.faults,
                              key_distribution=dist, value_size=shape,
                              value_content=writes, ttl=sets))
    return list(dict.fromkeys(loads))  # a read's values and TTLs are the same series


def _values(cmd: CommandSpec, shape: str | None, content: str,
            ttl: str) -> tuple[str | None, str, str]:
    """(value sizes, content, ttl) as far as ``cmd`` writes values (``__data__``) and
    SETs (``ttl``); a read of the seeded strings keeps the sizes (the seed stage draws each
    key's size from them), other reads keep the defaults."""
    writes = any(DATA in word for word in cmd.argv)
    sized = writes or cmd.seed is Seed.STRINGS
    return (shape if sized else None, content if writes else "random",
            ttl if "set" in cmd.calls_per_sequence else "none")


def expand(specs: list[BenchmarkSpec], runs: int = 1) -> list[Trial]:
    """All trials of all specs for ``runs`` rounds, in execution order."""
    if runs < 1:
        raise ValueError(f"runs must be positive, got {runs}")
    combos = [(spec.index, server, load, profile)
              for spec in specs for profile in spec.profiling
              for server in _servers(spec) for load in _loads(spec)]
    return [
        Trial(index=i, run=run, spec_index=spec_index, server=server, load=load,
              profile=profile)
        for i, (run, (spec_index, server, load, profile)) in enumerate(
            (run, combo) for run in range(1, runs + 1) for combo in combos)
    ]
