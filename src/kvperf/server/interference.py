"""Who else used the measured CPUs during a measure stage (pure: /proc text in, numbers out).

The reader (server/interference_probe.py) takes a ``Snapshot`` every interval; ``Tally``
adds them up and ``summarize`` turns the tally into per-core figures:

- busy: user + nice + system of the core (``/proc/stat`` per-cpu lines), steal beside it;
- own: CPU of kvperf's processes — its own process and its descendants (servers, load
  tools) plus the server pids it was given — read per thread (``/proc/PID/task/TID/stat``
  utime + stime) and placed on the core the thread last ran on (field 39, ``processor``);
- foreign: busy − own on the core: whatever else ran there, short-lived processes included;
  at least what the foreign processes seen there took (busy, read by ticks, leaves out irq
  and softirq time that the per-thread figures of kvperf's servers include, so busy − own
  can read low, even 0, beside a busy loop that took a third of the core).

An own process that exits between two samples (the load tool at the end of the stage) takes
its last ticks with it; they reappear in its parent's cutime/cstime, so the own total is
exact (``exact_own``) and the difference from what the samples saw is put on the cores its
vanished threads last ran on. Foreign processes are read per process (one file each, cheap
enough for every interval) and named when they ran on a watched core: a multi-threaded
one is placed by its main thread's last CPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

# /proc/<pid>/stat fields after "(comm) ", 0-based (field N of proc(5) is index N - 3)
_STATE, _PPID, _UTIME, _STIME, _CUTIME, _CSTIME, _PROCESSOR = 0, 1, 11, 12, 13, 14, 36


@dataclass(frozen=True)
class CoreTicks:
    """One CPU's counters of /proc/stat, in clock ticks."""

    busy: int  # user + nice + system
    steal: int


@dataclass(frozen=True)
class ProcStat:
    """One process (or thread) of /proc/PID/stat: CPU ticks and the CPU it last ran on."""

    pid: int
    comm: str
    ppid: int
    ticks: int  # utime + stime
    child_ticks: int  # cutime + cstime: reaped children's ticks
    cpu: int


def parse_proc_stat(text: str) -> dict[int, CoreTicks]:
    """The per-cpu lines of /proc/stat (``cpuN user nice system idle iowait irq softirq
    steal …``); the all-CPU ``cpu`` line is skipped."""
    cores: dict[int, CoreTicks] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit():
            continue
        values = [int(v) for v in rest.split()]
        steal = values[7] if len(values) > 7 else 0
        cores[int(name[3:])] = CoreTicks(values[0] + values[1] + values[2], steal)
    return cores


def parse_pid_stat(text: str) -> ProcStat | None:
    """A /proc/PID/stat (or task) line; None when it is not one (the comm may hold spaces
    and parentheses: it runs to the last ')')."""
    open_at, close_at = text.find("("), text.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    fields = text[close_at + 2:].split()
    if len(fields) <= _PROCESSOR:
        return None
    try:
        return ProcStat(int(text[:open_at]), text[open_at + 1:close_at], int(fields[_PPID]),
                        int(fields[_UTIME]) + int(fields[_STIME]),
                        int(fields[_CUTIME]) + int(fields[_CSTIME]), int(fields[_PROCESSOR]))
    except ValueError:
        return None


def parse_nonvoluntary(text: str) -> int | None:
    """``nonvoluntary_ctxt_switches`` of a /proc/PID/task/TID/status."""
    for line in text.splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            return int(line.split(":", 1)[1])
    return None


def own_pids(processes: Mapping[int, ProcStat], roots: Iterable[int]) -> set[int]:
    """``roots`` and every descendant of them (by ppid) among ``processes``."""
    children: dict[int, list[int]] = {}
    for proc in processes.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    todo = [pid for pid in roots if pid in processes]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


@dataclass(frozen=True)
class Scope:
    """What a measure stage watches: its cores (pinned ones, else every usable CPU), kvperf's
    own process (``root``) and the local server pids."""

    cores: tuple[int, ...]
    pinned: bool
    root: int
    servers: tuple[int, ...] = ()

    @property
    def roots(self) -> tuple[int, ...]:
        return (self.root, *self.servers)


@dataclass(frozen=True)
class Snapshot:
    """One reading: monotonic time, every CPU, every process, the threads of kvperf's own
    processes (by tid), and the involuntary context switches of the server's and the load
    tool's threads (tid → role, count)."""

    at: float
    cores: Mapping[int, CoreTicks]
    processes: Mapping[int, ProcStat]
    tasks: Mapping[int, ProcStat] = field(default_factory=dict)
    switches: Mapping[int, tuple[str, int]] = field(default_factory=dict)


def roles(processes: Mapping[int, ProcStat], scope: Scope) -> dict[str, set[int]]:
    """kvperf's own processes by role: ``server`` (the server pids and their children),
    ``client`` (the other descendants of kvperf: load tools), ``kvperf`` itself."""
    servers = own_pids(processes, scope.servers)
    everything = own_pids(processes, scope.roots)
    return {"server": servers, "client": everything - servers - {scope.root},
            "kvperf": {scope.root} & everything}


@dataclass
class Foreign:
    """A process that is not kvperf's, with its ticks on watched cores."""

    pid: int
    comm: str
    ticks: int = 0


@dataclass
class Tally:
    """The samples of one measure stage added up (``add`` each snapshot after the first)."""

    scope: Scope
    first: Snapshot
    last: Snapshot = field(init=False)
    samples: int = 1
    own_core: dict[int, int] = field(default_factory=dict)  # observed own ticks per cpu
    vanished: dict[int, tuple[int, int]] = field(default_factory=dict)  # tid → (cpu, ticks)
    seen: dict[int, int] = field(default_factory=dict)  # own tid → its ticks observed
    foreign: dict[int, Foreign] = field(default_factory=dict)
    foreign_core: dict[int, int] = field(default_factory=dict)  # foreign ticks per cpu
    switches: dict[str, int] = field(default_factory=dict)  # role → involuntary switches

    def __post_init__(self) -> None:
        self.last = self.first

    def add(self, snap: Snapshot) -> list[int]:
        """Count one more snapshot; the pids of foreign processes first seen on a watched
        core (the reader then reads their command lines)."""
        prev, self.last = self.last, snap
        self.samples += 1
        for tid, task in snap.tasks.items():
            before = prev.tasks.get(tid)
            delta = task.ticks - (before.ticks if before else 0)
            if delta > 0:
                self.own_core[task.cpu] = self.own_core.get(task.cpu, 0) + delta
                self.seen[tid] = self.seen.get(tid, 0) + delta
        for tid, task in prev.tasks.items():
            if tid not in snap.tasks:
                self.vanished[tid] = (task.cpu, self.seen.get(tid, 0))
        for tid, (role, count) in snap.switches.items():
            was = prev.switches.get(tid)
            delta = count - (was[1] if was else 0)
            self.switches[role] = self.switches.get(role, 0) + max(delta, 0)
        return self._foreign(prev, snap)

    def _foreign(self, prev: Snapshot, snap: Snapshot) -> list[int]:
        own = own_pids(snap.processes, self.scope.roots)
        watched, new = set(self.scope.cores), []
        for pid, proc in snap.processes.items():
            if pid in own or proc.cpu not in watched:
                continue
            before = prev.processes.get(pid)
            delta = proc.ticks - (before.ticks if before else 0)
            if delta <= 0:
                continue
            if pid not in self.foreign:
                self.foreign[pid] = Foreign(pid, proc.comm)
                new.append(pid)
            self.foreign[pid].ticks += delta
            self.foreign_core[proc.cpu] = self.foreign_core.get(proc.cpu, 0) + delta
        return new


def exact_own(first: Snapshot, last: Snapshot, scope: Scope) -> int:
    """kvperf's own ticks between two snapshots, on any CPU: every own process alive at the
    end (its ticks and its reaped children's since the start, or since it began), less the
    start ticks of own processes that ended (their parents' cutime counted them whole)."""
    own_first = own_pids(first.processes, scope.roots)
    own_last = own_pids(last.processes, scope.roots)

    def total(proc: ProcStat) -> int:
        return proc.ticks + proc.child_ticks

    alive = sum(total(last.processes[pid]) - (total(first.processes[pid])
                                              if pid in first.processes else 0)
                for pid in own_last)
    ended = sum(total(first.processes[pid]) for pid in own_first - own_last)
    return max(alive - ended, 0)


@dataclass(frozen=True)
class CoreUse:
    """One watched CPU over the stage, in seconds."""

    cpu: int
    busy: float
    own: float
    foreign: float
    steal: float


@dataclass(frozen=True)
class Culprit:
    """A foreign process that ran on a watched core: CPU seconds there."""

    pid: int
    command: str
    seconds: float


@dataclass(frozen=True)
class Sampled:
    """A measure stage's interference in numbers (results/interference.py judges it)."""

    wall: float
    samples: int
    pinned: bool
    cores: tuple[CoreUse, ...]
    culprits: tuple[Culprit, ...]
    switches: dict[str, int]


def _tail(tally: Tally) -> dict[int, float]:
    """Own ticks the samples missed (threads that ended between two samples), per CPU, put
    where those threads last ran, by what was seen of each."""
    seen = sum(tally.own_core.values())
    missing = exact_own(tally.first, tally.last, tally.scope) - seen
    if missing <= 0 or not tally.vanished:
        return {}
    weights: dict[int, float] = {}
    for cpu, ticks in tally.vanished.values():
        weights[cpu] = weights.get(cpu, 0.0) + ticks + 1.0
    total = sum(weights.values())
    return {cpu: missing * w / total for cpu, w in weights.items()}


def summarize(tally: Tally, hz: float, commands: Mapping[int, str], top: int = 3) -> Sampled:
    """Per watched CPU its busy, own, foreign (busy − own, or the ticks foreign processes
    were seen to take there when more) and steal seconds; the ``top`` foreign
    processes by CPU on watched cores (``commands``: their command lines where read, else
    their comm); involuntary context switches per role (as sampled: a thread's switches
    after the last sample before it ended are not seen)."""
    first, last, tail = tally.first, tally.last, _tail(tally)
    cores = []
    for cpu in tally.scope.cores:
        a, b = first.cores.get(cpu), last.cores.get(cpu)
        if a is None or b is None:
            continue
        busy = max(b.busy - a.busy, 0)
        own = tally.own_core.get(cpu, 0) + tail.get(cpu, 0.0)
        foreign = max(busy - own, tally.foreign_core.get(cpu, 0))
        cores.append(CoreUse(cpu, busy / hz, min(own, busy) / hz, foreign / hz,
                             max(b.steal - a.steal, 0) / hz))
    ranked = sorted(tally.foreign.values(), key=lambda f: (-f.ticks, f.pid))[:top]
    culprits = tuple(Culprit(f.pid, commands.get(f.pid) or f.comm, f.ticks / hz)
                     for f in ranked)
    return Sampled(round(last.at - first.at, 6), tally.samples, tally.scope.pinned,
                   tuple(cores), culprits, dict(sorted(tally.switches.items())))
