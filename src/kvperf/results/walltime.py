"""Wall-time stacks from a wall-time ``perf script`` (pure): where a server's threads spent
the profiled window, on a CPU or off it.

The text (``perf script --show-switch-events -F comm,tid,time,event,ip,sym``) holds three
kinds of records per thread: ``cpu-clock`` samples with their stack (on-CPU, each worth one
sampling period), ``sched:sched_switch`` samples with the stack a thread left the CPU in,
and ``PERF_RECORD_SWITCH OUT`` / ``IN`` records with their times. Each OUT…IN interval is
off-CPU time, weighed in microseconds and charged to the stack of the switch just before it,
with a last frame ``[off-cpu]`` (blocked: waiting for I/O, a lock, a timer) or
``[preempted]`` (runnable, waiting for a CPU). Folded lines are ``comm;root;…;leaf µs``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from kvperf.results.records import ProfileEntry

_HEADER = re.compile(r"^(?P<comm>\S.*?)\s+(?P<tid>\d+)\s+(?P<time>\d+\.\d+):\s+(?P<rest>.*)$")
_FRAME = re.compile(r"^\s+(?P<addr>[0-9a-f]+)\s+(?P<sym>.*?)\s*$")
OFF_CPU = "[off-cpu]"
PREEMPTED = "[preempted]"
KERNEL_PREFIX = "ffff"  # x86-64 kernel addresses; user frames never start so


@dataclass
class WallTime:
    """Folded wall-time stacks (µs) and the totals that make them up."""

    folded: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    on_cpu_us: float = 0.0
    off_cpu_us: float = 0.0
    # off-CPU µs by the innermost user-space frame of the blocking stack
    off_cpu_by_frame: defaultdict[str, float] = field(
        default_factory=lambda: defaultdict(float))

    def render(self) -> str:
        """The folded text kvflame draws (µs rounded; stacks under 1 µs left out)."""
        lines = [f"{stack} {round(us)}" for stack, us in sorted(self.folded.items())
                 if round(us) > 0]
        return "\n".join(lines) + ("\n" if lines else "")

    def top(self, count: int = 15) -> list[ProfileEntry]:
        """Off-CPU time by the user-space function a thread blocked in, largest first, as a
        share of all wall time (``self_pct``, like perf report's entries)."""
        total = self.on_cpu_us + self.off_cpu_us
        if not total:
            return []
        return [ProfileEntry(name=f"{name} (off-CPU)", self_pct=round(100 * us / total, 2))
                for name, us in sorted(self.off_cpu_by_frame.items(),
                                       key=lambda item: -item[1])[:count]]


@dataclass
class _Record:
    comm: str
    tid: int
    time: float
    event: str
    frames: list[tuple[str, str]]  # (address, symbol), leaf first


def _records(text: str) -> list[_Record]:
    records: list[_Record] = []
    for line in text.splitlines():
        frame = _FRAME.match(line) if line[:1].isspace() else None
        if frame and records:
            records[-1].frames.append((frame["addr"], frame["sym"] or "[unknown]"))
            continue
        header = _HEADER.match(line)
        if header:
            records.append(_Record(header["comm"], int(header["tid"]), float(header["time"]),
                                   header["rest"].strip(), []))
    return records


def _stack(comm: str, frames: list[tuple[str, str]], leaf: str | None = None) -> str:
    names = [comm, *(sym for _, sym in reversed(frames))]
    return ";".join(names + ([leaf] if leaf else []))


def _user_frame(frames: list[tuple[str, str]]) -> str:
    """The innermost user-space frame of a stack (where the thread entered the kernel)."""
    for addr, sym in frames:
        if not addr.startswith(KERNEL_PREFIX) and sym != "[unknown]":
            return sym
    return "[kernel]"


def fold(text: str, frequency: int) -> WallTime:
    """Wall-time stacks of a wall-time ``perf script`` text; ``frequency`` is the cpu-clock
    sampling rate (Hz), so each on-CPU sample weighs 1e6 / frequency µs."""
    period_us = 1e6 / frequency
    wall = WallTime()
    switched: dict[int, list[tuple[str, str]]] = {}  # tid → stack of its last sched_switch
    left: dict[int, tuple[float, list[tuple[str, str]], str]] = {}  # tid → out time, stack
    for rec in _records(text):
        if rec.event.startswith("PERF_RECORD_SWITCH OUT"):
            leaf = PREEMPTED if "preempt" in rec.event else OFF_CPU
            left[rec.tid] = (rec.time, switched.pop(rec.tid, []), leaf)
        elif rec.event.startswith("PERF_RECORD_SWITCH IN"):
            if rec.tid in left:
                out_time, frames, leaf = left.pop(rec.tid)
                us = (rec.time - out_time) * 1e6
                wall.folded[_stack(rec.comm, frames, leaf)] += us
                wall.off_cpu_us += us
                wall.off_cpu_by_frame[_user_frame(frames) if frames else leaf] += us
        elif rec.event.startswith("sched:sched_switch"):
            switched[rec.tid] = rec.frames
        elif rec.frames or rec.event.startswith("cpu-clock"):
            wall.folded[_stack(rec.comm, rec.frames)] += period_us
            wall.on_cpu_us += period_us
    return wall
