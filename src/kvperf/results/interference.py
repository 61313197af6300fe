"""The row's ``interference`` object and the ``disturbed`` verdict (pure).

A measure stage is disturbed when, on the cores it watched, other processes took more than
``DISTURBED_SHARE`` of its wall time, or the hypervisor stole more than that. Pinned
trials are judged by their worst core (a hog on the server's core starves the server even
when the client's core is quiet); unpinned ones by all watched cores together (their
threads move between cores within a sample, so one core's share is not theirs to judge).
docs/PERFORMANCE.md "Interference" has the measurements behind the threshold.
"""

from __future__ import annotations

from kvperf.core.cpus import format_cpu_list
from kvperf.results.records import CoreRecord, CulpritRecord, InterferenceRecord
from kvperf.server.interference import Sampled

DISTURBED_SHARE = 0.10
# Shortest measure stage judged: /proc counts CPU in 10 ms ticks, and a process ending at
# the stage's edge moves a few of them; under 0.5 s (50 ticks a core) that alone reads as
# 20-80% foreign CPU (sub-second request-bound trials on a quiet machine did).
MIN_JUDGED_SECONDS = 0.5
COMMAND_CHARS = 80  # a culprit's command line is cut to this
HINT = ("quiet the machine, pin elsewhere (config server_cpu_range / client_cpu_range) "
        "or rerun")


def _share(seconds: float, wall: float) -> float:
    return round(seconds / wall, 4) if wall > 0 else 0.0


def short_command(text: str) -> str:
    """A command line as a footnote shows it: the program's name without its directory,
    and a long line cut in the middle (its end is often the script it runs)."""
    program, sep, rest = " ".join(text.split()).partition(" ")
    text = program.rsplit("/", 1)[-1] + sep + rest
    if len(text) <= COMMAND_CHARS:
        return text
    half = (COMMAND_CHARS - 1) // 2
    return text[:half] + "…" + text[-(COMMAND_CHARS - 1 - half):]


def _cores(sampled: Sampled) -> list[CoreRecord]:
    return [CoreRecord(cpu=c.cpu, busy_s=round(c.busy, 3), own_s=round(c.own, 3),
                       foreign_s=round(c.foreign, 3),
                       foreign_share=_share(c.foreign, sampled.wall),
                       steal_s=round(c.steal, 3), steal_share=_share(c.steal, sampled.wall))
            for c in sampled.cores]


def foreign_share(cores: list[CoreRecord], pinned: bool, wall: float) -> float:
    """The share the verdict compares: the worst core's when pinned, else all cores'."""
    if not cores:
        return 0.0
    if pinned:
        return max(c["foreign_share"] for c in cores)
    return _share(sum(c["foreign_s"] for c in cores), wall * len(cores))


def interference_record(sampled: Sampled, interval: float,
                        threshold: float | None = DISTURBED_SHARE,
                        client_saturated: bool | None = None) -> InterferenceRecord:
    """The row's object from a measure stage's samples, with the verdict (none when
    ``threshold`` is None: the trial's numbers do not depend on other processes)."""
    cores = _cores(sampled)
    record = InterferenceRecord(
        watched=format_cpu_list([c.cpu for c in sampled.cores]), pinned=sampled.pinned,
        wall_s=round(sampled.wall, 3), samples=sampled.samples, interval_s=interval,
        cores=cores, foreign_share=foreign_share(cores, sampled.pinned, sampled.wall),
        steal_share=max((c["steal_share"] for c in cores), default=0.0),
        top=[CulpritRecord(pid=c.pid, command=short_command(c.command), cpu_s=round(c.seconds, 3))
             for c in sampled.culprits],
        involuntary_switches=dict(sampled.switches), client_saturated=client_saturated,
        threshold=threshold, excluded=False, attempt=1, retried=None)
    judged = threshold is not None and sampled.wall >= MIN_JUDGED_SECONDS
    record["cause"] = cause(record) if judged else None
    record["disturbed"] = record["cause"] is not None
    return record


def cause(record: InterferenceRecord) -> str | None:
    """Why the trial is disturbed, in words (None: it is not): the share, the core(s) and
    the process that took most of it."""
    threshold = record.get("threshold") or DISTURBED_SHARE
    share, steal = record.get("foreign_share", 0.0), record.get("steal_share", 0.0)
    cores = record.get("cores", [])
    if share > threshold:
        where = (f"cpu{max(cores, key=lambda c: c['foreign_share'])['cpu']}"
                 if record.get("pinned") and cores else f"cpus {record.get('watched', '?')}")
        top = record.get("top") or []
        whom = (f"pid {top[0]['pid']} ({top[0]['command']})" if top
                else "processes that ended between samples")
        return f"{share:.0%} of {where} went to {whom}"
    if steal > threshold:
        core = max(cores, key=lambda c: c["steal_share"])["cpu"]
        return f"{steal:.0%} of cpu{core} was stolen by the hypervisor"
    return None


def is_disturbed(record: InterferenceRecord | None) -> bool:
    return bool(record and record.get("disturbed"))


def footnote(record: InterferenceRecord) -> str:
    """The one line under a results table for a disturbed trial."""
    return f"! disturbed: {record.get('cause')} — {HINT}"
