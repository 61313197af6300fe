"""Long-lived child processes (servers, load tools): started through core/proc.spawn and
stopped here, by the pid kvperf started, never by name.

Children run in their own session (a terminal's Ctrl-C reaches only kvperf, which then tears
down in order) and get SIGKILL from the kernel if kvperf itself dies (PR_SET_PDEATHSIG), so
nothing outlives a run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kvperf.core.cpus import format_cpu_list, parse_cpu_list
from kvperf.core.proc import TimeoutExpired, spawn
from kvperf.server.interference import parse_pid_stat


def pinned_argv(argv: Sequence[str], cpus: tuple[int, ...] | None) -> list[str]:
    """Prefix argv with taskset when CPUs are given."""
    if not cpus:
        return list(argv)
    return ["taskset", "-c", format_cpu_list(cpus), *argv]


@dataclass(frozen=True)
class CpuTimes:
    """User and system CPU seconds of a process (from /proc/<pid>/stat)."""

    user: float
    system: float

    @property
    def total(self) -> float:
        return self.user + self.system


class ManagedProcess:
    """A child process kvperf started; ``stop`` escalates SIGTERM → SIGKILL on its pid only."""

    def __init__(self, argv: Sequence[str], *, cpus: tuple[int, ...] | None = None,
                 stdout: Path | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None, stdin_pipe: bool = False) -> None:
        self.argv = pinned_argv(argv, cpus)
        self._out: IO[bytes] | None = stdout.open("ab") if stdout else None
        self.popen = spawn(self.argv, log=self._out, cwd=cwd, env=env, stdin_pipe=stdin_pipe)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def exit_description(self) -> str:
        """'exited with code N' / 'killed by SIGKILL' / 'running'."""
        code = self.popen.poll()
        if code is None:
            return "running"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with code {code}"

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True when the process has ended."""
        try:
            self.popen.wait(timeout=timeout)
        except TimeoutExpired:
            return False
        return True

    def stop(self, graceful: Callable[[], None] | None = None, grace: float = 3.0) -> None:
        """Stop this process: ``graceful()`` first if given, then SIGTERM, then SIGKILL."""
        steps: list[Callable[[], None]] = [graceful] if graceful else []
        steps += [lambda: self._signal(signal.SIGTERM), lambda: self._signal(signal.SIGKILL)]
        for step in steps:
            if not self.alive():
                break
            with contextlib.suppress(OSError):
                step()
            self.wait(grace)
        self.wait(grace)
        if self._out:
            self._out.close()

    def _signal(self, sig: signal.Signals) -> None:
        if self.alive():
            os.kill(self.pid, sig)

    def communicate(self, timeout: float) -> tuple[str, str]:
        """Collect piped output (only for processes started without a log file)."""
        out, err = self.popen.communicate(timeout=timeout)
        return (out or b"").decode(errors="replace"), (err or b"").decode(errors="replace")

    def allowed_cpus(self) -> tuple[int, ...] | None:
        """The CPUs the process may run on, read back from /proc/<pid>/status."""
        return read_allowed_cpus(self.pid)

    def cpu_times(self) -> CpuTimes | None:
        return read_cpu_times(self.pid)


def read_allowed_cpus(pid: int) -> tuple[int, ...] | None:
    """Parse Cpus_allowed_list from /proc/<pid>/status; None if the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return parse_cpu_list(line.split(":", 1)[1].strip())
    except (OSError, ValueError):
        return None
    return None


def read_cpu_times(pid: int) -> CpuTimes | None:
    """utime and stime of /proc/<pid>/stat in seconds; None if the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return CpuTimes(int(fields[11]) / ticks, int(fields[12]) / ticks)


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or one of its descendants (parents from /proc/<pid>/stat;
    False once the chain leaves the machine's processes or ends at init)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            proc = parse_pid_stat(Path(f"/proc/{pid}/stat").read_text())
        except OSError:
            return False
        if proc is None or proc.ppid <= 1:
            return False
        pid = proc.ppid
    return False


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()

