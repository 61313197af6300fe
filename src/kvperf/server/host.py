"""Facts about this host, recorded with every trial for provenance (never a grouping key)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from kvperf.core.jsontypes import JsonValue


def available_cpus() -> set[int]:
    """CPUs this process may use (what taskset ranges are checked against)."""
    return set(os.sched_getaffinity(0))


def memory_total(meminfo: str = "/proc/meminfo") -> int:
    """The machine's memory in bytes (``MemTotal``); OSError/ValueError when unreadable."""
    for line in Path(meminfo).read_text().splitlines():
        if line.startswith("MemTotal:"):
            number, unit = line.split(":", 1)[1].split()
            return int(number) * (1024 if unit == "kB" else 1)
    raise ValueError(f"{meminfo} has no MemTotal line")


def _read(path: str, default: str = "unknown") -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo", "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def governor() -> str:
    return _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")


def free_port(cluster: bool = False) -> int:
    """A TCP port free on 127.0.0.1 now (and, for cluster nodes, its bus port +10000)."""
    for _ in range(200):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if not cluster:
            return port
        if port + 10000 < 65536 and _bindable(port) and _bindable(port + 10000):
            return port
    raise OSError("no free port pair found for a cluster node")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def host_facts() -> dict[str, JsonValue]:
    """The host part of a result row's ``env``."""
    uname = os.uname()
    return {"host": socket.gethostname(), "kernel": f"{uname.sysname} {uname.release}",
            "arch": uname.machine, "cpu": cpu_model(), "cpus": os.cpu_count(),
            "governor": governor(), "python": platform.python_version()}
