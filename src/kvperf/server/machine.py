"""Judging this machine's CPU and kernel for benchmarking (pure: text in, ``Fact`` out).

Each function takes what /proc or /sys holds (``None`` when the file is absent) and says
whether it hurts measurements, with a hint, in the manner of pyperf's ``system show``. The
reading lives in ``server/machine_probe.py``.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import TypedDict

from kvperf.core.cpus import format_cpu_list, parse_cpu_list
from kvperf.server.fact import Fact, unknown

PIN_HINT = "pin them apart with server_cpu_range / client_cpu_range"


def cpu_count_fact(online: int, usable: tuple[int, ...]) -> Fact:
    """Online CPUs; fewer than two usable means server and client share a CPU."""
    text = f"{online} (usable by kvperf: {format_cpu_list(usable)})"
    if len(usable) < 2:
        return Fact("cpu_count", "CPUs", online, text, "warn",
                    "server and load tool must share one CPU: the client steals the server's "
                    "time; use a machine with at least 2 CPUs (4+ to isolate them)")
    return Fact("cpu_count", "CPUs", online, text, "ok", f"server and client on separate CPUs: "
                f"{PIN_HINT}")


def bracketed(text: str) -> str:
    """The selected word of a sysfs choice list: 'always [madvise] never' → 'madvise'."""
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else text.strip()


def governor_fact(governors: dict[int, str]) -> Fact:
    """cpufreq governor per CPU (value: governor → CPUs); all but ``performance`` ramp."""
    if not governors:
        return unknown("governor", "CPU governor",
                       "no cpufreq in /sys/devices/system/cpu/cpu*/cpufreq (typical of VMs: "
                       "the host sets the frequency); `kvperf noise` shows its effect")
    by_name: dict[str, list[int]] = {}
    for cpu, name in sorted(governors.items()):
        by_name.setdefault(name, []).append(cpu)
    text = ", ".join(f"{name} (CPU {format_cpu_list(cpus)})" for name, cpus in by_name.items())
    if set(by_name) == {"performance"}:
        return Fact("governor", "CPU governor", by_name, "performance", "ok")
    return Fact("governor", "CPU governor", by_name, text, "warn",
                "the frequency follows load, so the first seconds run slower and runs differ: "
                "`cpupower frequency-set -g performance` (as root)")


def turbo_fact(no_turbo: str | None, boost: str | None) -> Fact:
    """Turbo/boost: intel_pstate's ``no_turbo`` (1 = off) or cpufreq's ``boost`` (1 = on)."""
    if no_turbo is None and boost is None:
        return unknown("turbo", "Turbo / boost",
                       "no intel_pstate/no_turbo or cpufreq/boost in /sys (typical of VMs: the "
                       "host decides)")
    enabled = no_turbo.strip() == "0" if no_turbo is not None else (boost or "").strip() == "1"
    source = "intel_pstate/no_turbo" if no_turbo is not None else "cpufreq/boost"
    if not enabled:
        return Fact("turbo", "Turbo / boost", False, f"off ({source})", "ok")
    fix = ("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo" if no_turbo is not None
           else "echo 0 > /sys/devices/system/cpu/cpufreq/boost")
    return Fact("turbo", "Turbo / boost", True, f"on ({source})", "warn",
                "the clock depends on temperature and on how many cores are busy, so runs "
                f"differ: `{fix}` (as root) for steadier numbers")


def smt_fact(control: str | None, active: str | None, siblings: list[str]) -> Fact:
    """Simultaneous multithreading; two busy siblings share one core's pipeline and caches."""
    if control is None:
        return unknown("smt", "SMT (hyper-threading)", "no /sys/devices/system/cpu/smt")
    state = control.strip()
    shared = sorted({s.strip() for s in siblings if "," in s or "-" in s})
    if active is not None and active.strip() == "1":
        pairs = " ".join(shared) or "see thread_siblings_list"
        return Fact("smt", "SMT (hyper-threading)", True, f"on (siblings {pairs})", "warn",
                    "never put server and client on two threads of one core; "
                    f"{PIN_HINT} on different cores (or `echo off > "
                    "/sys/devices/system/cpu/smt/control`)")
    shown = {"notsupported": "not supported", "notimplemented": "not implemented"}
    return Fact("smt", "SMT (hyper-threading)", False, shown.get(state, state) or "off", "ok")


def isolated_fact(isolated: str | None, nohz_full: str | None, cpus: int) -> Fact:
    """CPUs removed from the scheduler (isolcpus); benchmarks pinned there see no other tasks."""
    if isolated is None:
        return unknown("isolated_cpus", "Isolated CPUs", "no /sys/devices/system/cpu/isolated")
    chosen = list(parse_cpu_list(isolated)) if isolated.strip() else []
    tickless = nohz_full.strip() if nohz_full and nohz_full.strip() not in ("", "(null)") else ""
    if chosen:
        text = format_cpu_list(chosen) + (f" (nohz_full {tickless})" if tickless else "")
        return Fact("isolated_cpus", "Isolated CPUs", chosen, text, "ok",
                    f"{PIN_HINT} on the isolated CPUs")
    if cpus < 4:
        return Fact("isolated_cpus", "Isolated CPUs", [], "none", "ok",
                    "too few CPUs to isolate any; other tasks share the benchmark CPUs")
    return Fact("isolated_cpus", "Isolated CPUs", [], "none", "warn",
                "other tasks run on the benchmark CPUs: boot with isolcpus=<list> "
                f"nohz_full=<list> rcu_nocbs=<list>, then {PIN_HINT} on them")


def numa_fact(nodes: dict[int, str] | None) -> Fact:
    """NUMA nodes and their CPUs; a server and client on two nodes pay remote memory."""
    if nodes is None:
        return unknown("numa", "NUMA", "no /sys/devices/system/node (kernel without NUMA)")
    layout = {f"node{n}": list(parse_cpu_list(cpus)) if cpus.strip() else []
              for n, cpus in sorted(nodes.items())}
    text = ", ".join(f"{name}: CPU {format_cpu_list(c) or '-'}" for name, c in layout.items())
    if len([c for c in layout.values() if c]) <= 1:
        return Fact("numa", "NUMA", layout, f"1 node ({text})", "ok")
    return Fact("numa", "NUMA", layout, f"{len(layout)} nodes ({text})", "warn",
                "memory and caches are local to a node: keep the server's and client's CPUs "
                "(server_cpu_range / client_cpu_range) in one node, or compare only runs with "
                "the same placement")


class LoadValue(TypedDict, total=False):
    """The noisy-neighbours fact's value: load averages (1, 5, 15 min), the CPUs, and the
    CPU sample's busy and steal percent when one was taken."""

    load_average: list[float]
    cpus: int
    busy_percent: float
    steal_percent: float
    sample_seconds: float


def load_fact(loadavg: str | None, cpus: int, sample: CpuSample | None) -> Fact:
    """Load average and a short CPU sample: other busy processes (or a busy host) add noise."""
    if loadavg is None:
        return unknown("noisy_neighbours", "Noisy neighbours", "no /proc/loadavg")
    fields = loadavg.split()
    averages = [float(x) for x in fields[:3]]
    value: LoadValue = {"load_average": averages, "cpus": cpus}
    text = f"load {' '.join(fields[:3])} on {cpus} CPUs"
    if sample is not None:
        value |= {"busy_percent": round(sample.busy * 100, 1),
                  "steal_percent": round(sample.steal * 100, 1),
                  "sample_seconds": sample.seconds}
        text += f"; {sample.busy:.0%} busy, {sample.steal:.0%} steal over {sample.seconds:g}s"
    problems = noise_problems(averages[0], cpus, sample)
    if not problems:
        return Fact("noisy_neighbours", "Noisy neighbours", value, text, "ok")
    return Fact("noisy_neighbours", "Noisy neighbours", value, text, "warn",
                "; ".join(problems) + ": results will be noisy; wait for an idle machine "
                "(`kvperf noise` measures it)")


BUSY_LIMIT = 0.10  # share of all CPUs busy with other work before a run
STEAL_LIMIT = 0.02  # share of CPU time the hypervisor gave to other guests


def noise_problems(load1: float, cpus: int, sample: CpuSample | None) -> list[str]:
    """What makes this machine noisy now (load per CPU, busy share, steal share)."""
    problems = []
    if load1 > max(0.2, BUSY_LIMIT * cpus):
        problems.append(f"other work is running (1-minute load {load1:g} on {cpus} CPUs)")
    if sample is not None and sample.busy > BUSY_LIMIT:
        problems.append(f"CPUs were {sample.busy:.0%} busy with other processes")
    if sample is not None and sample.steal > STEAL_LIMIT:
        problems.append(f"the hypervisor stole {sample.steal:.0%} of CPU time (busy host)")
    return problems


@dataclass(frozen=True)
class CpuSample:
    """Shares of all CPU time over a short interval: busy (not idle/iowait/steal) and stolen."""

    busy: float
    steal: float
    seconds: float


def cpu_sample(before: str, after: str, seconds: float) -> CpuSample | None:
    """Busy and steal shares between two /proc/stat texts (proc(5): the aggregate cpu line).

    Fields: user nice system idle iowait irq softirq steal guest guest_nice (guest time is
    already counted in user/nice, so it is left out of the total).
    """
    first, second = _cpu_ticks(before), _cpu_ticks(after)
    if first is None or second is None:
        return None
    delta = [b - a for a, b in zip(first, second, strict=True)]
    total = sum(delta)
    if total <= 0:
        return None
    idle, steal = delta[3] + delta[4], delta[7]
    return CpuSample((total - idle - steal) / total, steal / total, seconds)


def _cpu_ticks(proc_stat: str) -> list[int] | None:
    for line in proc_stat.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu" and len(parts) >= 9:
            return [int(x) for x in parts[1:9]]
    return None


def thp_fact(enabled: str | None) -> Fact:
    """Transparent huge pages; ``always`` gives latency spikes on fork (Valkey warns about it)."""
    if enabled is None:
        return unknown("transparent_hugepages", "Transparent huge pages",
                       "no /sys/kernel/mm/transparent_hugepage/enabled")
    mode = bracketed(enabled)
    if mode != "always":
        return Fact("transparent_hugepages", "Transparent huge pages", mode, mode, "ok")
    return Fact("transparent_hugepages", "Transparent huge pages", mode, mode, "warn",
                "latency spikes and memory growth after fork (saves, replication): "
                "`echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` (as root)")


def io_uring_fact(disabled: str | None, probe_errno: int | None) -> Fact:
    """Whether io_uring may be used: the sysctl and an actual io_uring_setup(2) call.

    ``kernel.io_uring_disabled`` (Linux 6.6+): 0 all may, 1 only root or members of
    ``kernel.io_uring_group``, 2 nobody. ``probe_errno``: 0 when setup succeeded, else errno.
    """
    sysctl = int(disabled) if disabled is not None and disabled.strip().isdigit() else None
    value = {"allowed": None if probe_errno is None else probe_errno == 0,
             "io_uring_disabled": sysctl,
             "probe": None if probe_errno is None else _errno_name(probe_errno)}
    shown = "" if sysctl is None else f", io_uring_disabled={sysctl}"
    if probe_errno == 0:
        return Fact("io_uring", "io_uring", value, f"allowed (io_uring_setup ok{shown})", "ok")
    if probe_errno == errno.ENOSYS:
        return Fact("io_uring", "io_uring", value, "not in this kernel (ENOSYS)", "missing",
                    "the kernel was built without io_uring: load tools fall back to epoll")
    if probe_errno is None:
        return Fact("io_uring", "io_uring", value, f"not probed{shown}", "unknown",
                    "io_uring_setup(2) could not be called here (not Linux?)")
    return Fact("io_uring", "io_uring", value,
                f"refused ({_errno_name(probe_errno)}{shown})", "warn",
                "io_uring load tools cannot run here: `sysctl kernel.io_uring_disabled=0` "
                "(as root), or a container's seccomp profile blocks it")


def _errno_name(number: int) -> str:
    return "ok" if number == 0 else errno.errorcode.get(number, f"errno {number}")
