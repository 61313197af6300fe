"""The valkey-benchmark flag vocabulary that kvload shares: one rendering for both adapters."""

from __future__ import annotations

from kvperf.driver.base import Target
from kvperf.plan.trial import Load


def load_flags(load: Load, target: Target, bound: list[str]) -> list[str]:
    """Connection, size, pipeline, keyspace, threads, cluster and TLS flags (pure)."""
    first = target.first
    flags = ["-h", first.host, "-p", str(first.port), "-c", str(load.clients), *bound,
             "-d", str(load.data_size), "-P", str(load.pipeline), "-r", str(load.keyspacelen)]
    if load.threads:
        flags += ["--threads", str(load.threads)]
    if target.cluster:
        flags.append("--cluster")
    if target.tls_ca:
        flags += ["--tls", "--cacert", str(target.tls_ca)]
    return flags
