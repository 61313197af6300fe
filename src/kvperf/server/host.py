"""Facts about this host, recorded with every trial for provenance (never a grouping key)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from kvperf import __version__
from kvperf.core.jsontypes import JsonValue
from kvperf.server.mitigations import boot_setting, mitigations_fact


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


CPU_SYS = "/sys/devices/system/cpu"


def smt(root: str = CPU_SYS) -> str:
    """SMT (hyper-threading): on, off, forceoff, notsupported — or unknown."""
    return _read(f"{root}/smt/control")


def turbo(root: str = CPU_SYS) -> str:
    """Turbo/boost: on or off (intel_pstate's ``no_turbo``, else cpufreq's ``boost``), or
    unknown when the machine shows neither (a VM, often)."""
    no_turbo = _read(f"{root}/intel_pstate/no_turbo", "")
    if no_turbo in ("0", "1"):
        return "off" if no_turbo == "1" else "on"
    boost = _read(f"{root}/cpufreq/boost", "")
    return {"1": "on", "0": "off"}.get(boost, "unknown")


def mitigations(root: str = CPU_SYS, cmdline: str = "/proc/cmdline") -> str:
    """The CPU vulnerabilities' state in a line, as `kvperf doctor` judges it
    (server/mitigations.py: the costly ones named, then counts), with the kernel's
    ``mitigations=`` option when given (``mitigations=off`` leaves them vulnerable)."""
    folder = Path(root) / "vulnerabilities"
    try:
        entries = {p.name: _read(str(p)) for p in sorted(folder.iterdir())}
    except OSError:
        return "unknown"
    boot = _read(cmdline, "")
    text = mitigations_fact(entries, boot).text
    option = boot_setting(boot)
    return f"mitigations={option}; {text}" if option else text


def microcode(cpuinfo: str = "/proc/cpuinfo") -> str:
    for line in _read(cpuinfo, "").splitlines():
        if line.startswith("microcode"):
            return line.split(":", 1)[1].strip()
    return "unknown"


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
    """The host part of a result row's ``env`` (read once per run: a few small files)."""
    uname = os.uname()
    return {"host": socket.gethostname(), "kernel": f"{uname.sysname} {uname.release}",
            "arch": uname.machine, "cpu": cpu_model(), "cpus": os.cpu_count(),
            "governor": governor(), "python": platform.python_version(),
            "smt": smt(), "turbo": turbo(), "mitigations": mitigations(),
            "microcode": microcode(), "kvperf": __version__}
