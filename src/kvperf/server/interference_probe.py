"""The one reader of /proc for interference sampling (server/interference.py judges what
it reads) and the sampler thread of a measure stage.

``Sampler`` takes a snapshot on entry, one every ``interval`` seconds on its own thread (so
a short-lived process or a thread that moves between cores is seen), and a last one on exit;
``result`` is then the stage's ``Sampled``. A process that ends while it is read is skipped.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType

from kvperf.core.redact import redact_command
from kvperf.server.interference import (
    ProcStat,
    Sampled,
    Scope,
    Snapshot,
    Tally,
    parse_nonvoluntary,
    parse_pid_stat,
    parse_proc_stat,
    roles,
    summarize,
)

INTERVAL = 0.25  # seconds between samples (docs/PERFORMANCE.md: its cost)
PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:  # the process (or thread) ended while it was read
        return None


def _stats(paths: list[Path]) -> dict[int, ProcStat]:
    found = {}
    for path in paths:
        text = _read(path)
        stat = parse_pid_stat(text) if text else None
        if stat is not None:
            found[stat.pid] = stat
    return found


def _entries(path: Path) -> list[str]:
    try:
        return [name for name in os.listdir(path) if name.isdigit()]
    except OSError:
        return []


def read_snapshot(scope: Scope, proc: Path = PROC) -> Snapshot:
    """Every CPU's counters, every process's stat, and the threads (stat, involuntary
    switches) of kvperf's own processes."""
    cores = parse_proc_stat(_read(proc / "stat") or "")
    processes = _stats([proc / pid / "stat" for pid in _entries(proc)])
    by_role = roles(processes, scope)
    tasks: dict[int, ProcStat] = {}
    switches: dict[int, tuple[str, int]] = {}
    for role, pids in by_role.items():
        for pid in pids:
            base = proc / str(pid) / "task"
            for tid in _entries(base):
                stat = _stats([base / tid / "stat"])
                tasks.update(stat)
                if role == "kvperf" or not stat:
                    continue
                count = parse_nonvoluntary(_read(base / tid / "status") or "")
                if count is not None:
                    switches[int(tid)] = (role, count)
    return Snapshot(time.monotonic(), cores, processes, tasks, switches)


def read_command(pid: int, proc: Path = PROC) -> str | None:
    """A process's command line (arguments joined by spaces, credentials hidden: it is shown and
    stored when the process disturbed a trial), None when it has none."""
    text = _read(proc / str(pid) / "cmdline")
    return redact_command(text.split("\0")).strip() or None if text else None


class Sampler:
    """Samples a measure stage (module doc); ``with`` starts and stops the thread."""

    def __init__(self, scope: Scope, interval: float = INTERVAL, proc: Path = PROC) -> None:
        self.scope, self.interval, self.proc = scope, interval, proc
        self.result: Sampled | None = None
        self._stop = threading.Event()
        self._commands: dict[int, str] = {}
        self._thread = threading.Thread(target=self._loop, name="interference", daemon=True)
        self._tally: Tally | None = None

    def __enter__(self) -> Sampler:
        self._tally = Tally(self.scope, read_snapshot(self.scope, self.proc))
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        assert self._tally is not None
        for pid in self._tally.add(read_snapshot(self.scope, self.proc)):
            command = read_command(pid, self.proc)
            if command:
                self._commands[pid] = command

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        assert self._tally is not None
        self.result = summarize(self._tally, os.sysconf("SC_CLK_TCK"), self._commands)
