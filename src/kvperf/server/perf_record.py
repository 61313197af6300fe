"""Sampling profiles with ``perf record`` attached by pid to a server node.

The software ``cpu-clock`` event is used because hardware events are missing on most VMs
(and it samples the same way where they exist). Call graphs are frame-pointer walks (``fp``,
small files; whole stacks for Debian's valkey-server) or DWARF unwinding (``dwarf``, for
binaries built without frame pointers; ~30x larger perf.data). Kernel frames are recorded
when ``kernel.perf_event_paranoid`` allows them (≤ 1, or root); otherwise user frames only.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from kvperf.core.errors import ServerError
from kvperf.core.proc import run
from kvperf.server.process import ManagedProcess

PERF = "perf"
EVENT = "cpu-clock"
CALL_GRAPHS = ("fp", "dwarf")
PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
STOP_GRACE = 30.0  # perf writes its buildids after SIGINT


def paranoid_level(path: Path = PARANOID) -> int | None:
    """``kernel.perf_event_paranoid`` (None when unreadable)."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def kernel_stacks_note(level: int | None, root: bool) -> str | None:
    """Why kernel frames are missing from the profile (None: they are recorded) (pure)."""
    if root or (level is not None and level <= 1):
        return None
    return (f"kernel.perf_event_paranoid is {level}: user-space stacks only; "
            "sysctl kernel.perf_event_paranoid=1 (or run as root) adds kernel frames")


def unavailable(level: int | None, root: bool) -> str | None:
    """Why ``perf record -p`` cannot attach to a server here (None when it can)."""
    if shutil.which(PERF) is None:
        return "perf is not installed (Debian package 'linux-perf')"
    if not root and level is not None and level > 2:
        return (f"kernel.perf_event_paranoid is {level}, which forbids attaching perf to "
                "a process; run 'sysctl kernel.perf_event_paranoid=2' (or lower) or run "
                "as root")
    return None


def is_root() -> bool:
    return os.geteuid() == 0


class PerfRecorder:
    """``perf record`` on one pid, from construction until ``stop``."""

    def __init__(self, pid: int, data: Path, frequency: int, call_graph: str,
                 kernel: bool) -> None:
        self.data = data
        event = EVENT if kernel else f"{EVENT}:u"
        argv = [PERF, "record", "-e", event, "-F", str(frequency), "--call-graph",
                call_graph, "-p", str(pid), "-o", str(data)]
        self.process = ManagedProcess(argv, stdout=data.with_suffix(".log"))

    def stop(self) -> None:
        """SIGINT (perf then writes perf.data); ServerError when no perf.data appeared."""
        self.process.stop(graceful=lambda: self.process.popen.send_signal(signal.SIGINT),
                          grace=STOP_GRACE)
        if not self.data.is_file() or self.data.stat().st_size == 0:
            raise ServerError(f"perf record wrote no {self.data.name}; see "
                              f"{self.data.with_suffix('.log')}")


def perf_script(data: Path, out: Path) -> None:
    """``perf script`` text of a recording (the input of kvflame collapse)."""
    done = run([PERF, "script", "-i", str(data)], timeout=600.0, name="perf script")
    done.check()
    out.write_text(done.stdout)


def perf_report(data: Path, sort: str) -> str:
    """``perf report --stdio --no-children --sort SORT`` text (self CPU per SORT key)."""
    done = run([PERF, "report", "--stdio", "--no-children", "-g", "none", "--sort", sort,
                "-i", str(data)],
               timeout=600.0, name=f"perf report --sort {sort}")
    return done.check().stdout
