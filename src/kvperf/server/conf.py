"""Rendering a server node's command line (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.plan.trial import ServerSetup
from kvperf.server.tls import TlsFiles


@dataclass(frozen=True)
class NodePaths:
    """Per-node locations: its working directory (nodes.conf) and its log file."""

    workdir: Path
    log: Path


def node_argv(binary: Path, setup: ServerSetup, port: int, paths: NodePaths,
              tls: TlsFiles | None) -> list[str]:
    """The full argv of one server node. Logging goes to stdout, which kvperf captures."""
    argv = [str(binary), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--logfile", "", "--dir", str(paths.workdir)]
    argv += _listen_args(port, tls, setup.cluster_mode)
    if setup.io_threads:
        argv += ["--io-threads", str(setup.io_threads)]
    if setup.cluster_mode:
        argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
    for name, value in setup.custom_configs:
        argv += [f"--{name.lstrip('-')}", value]
    for module in setup.modules:
        argv += ["--loadmodule", module.path, *module.startup_args]
    return argv


def _listen_args(port: int, tls: TlsFiles | None, cluster: bool) -> list[str]:
    if tls is None:
        return ["--port", str(port)]
    args = ["--port", "0", "--tls-port", str(port), "--tls-cert-file", str(tls.cert),
            "--tls-key-file", str(tls.key), "--tls-ca-cert-file", str(tls.ca),
            "--tls-auth-clients", "no"]
    return args + (["--tls-cluster", "yes", "--tls-replication", "yes"] if cluster else [])


CRASH_MARKERS = ("crashed by signal", "BUG REPORT", "Guru Meditation", "ASSERTION FAILED",
                 "Fatal error", "Segmentation fault")


def find_crash(log_text: str) -> str | None:
    """The first log line that reports a crash, or None."""
    for line in log_text.splitlines():
        if any(marker in line for marker in CRASH_MARKERS):
            return line.strip()
    return None
