"""Rendering a server node's command line (pure), and its password file (the one place a
password is written: never into argv, which ``ps`` shows to every user)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.secret import Secret, config_quoted
from kvperf.plan.trial import ServerSetup
from kvperf.server.tls import TlsFiles


@dataclass(frozen=True)
class NodePaths:
    """Per-node locations: its working directory (nodes.conf) and its log file."""

    workdir: Path
    log: Path


LOOPBACK = "127.0.0.1"
AUTH_CONF = "kvperf-auth.conf"


def node_argv(binary: Path, setup: ServerSetup, port: int, paths: NodePaths,
              tls: TlsFiles | None, bind: str = LOOPBACK,
              auth_conf: Path | None = None) -> list[str]:
    """The full argv of one server node. Logging goes to stdout, which kvperf captures. An
    ``auth_conf`` (``write_auth_conf``) is the config file argument, read before the flags."""
    head = [str(binary), *([str(auth_conf)] if auth_conf else [])]
    argv = [*head, "--bind", bind, "--save", "", "--appendonly", "no",
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


def write_auth_conf(directory: Path, password: Secret) -> Path:
    """``requirepass`` in a file only its owner may read (0600 from its creation)."""
    path = directory / AUTH_CONF
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        quoted = config_quoted(password)
        handle.write(f"requirepass {quoted}\nmasterauth {quoted}\n")
    return path


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
