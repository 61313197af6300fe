"""The row's ``failover`` record (pure): the faults as executed (server/faults.py) lined up
with the load's timeline (kvload's JSON ``timeline``, kvload --reconnect-on-error).

Per fault that was followed by errors: the time from the fault to the first error, and the
unavailability window — from the last successful request before those errors to the first
successful one after (kvload's ``outages``, ms resolution; null when the load never came
back). For the whole stage: errors by kind, and p99 before / during / after, each the worst
per-second p99 of the seconds wholly before the first fault, overlapping an outage, and
after the last outage ended (per-second p99s cannot be merged into one percentile). And,
when checked, the acknowledged writes lost: keys kvload logged as acknowledged that the
primary after the failover lacks. And the timeline: per second successes and errors, from
``start_unix`` (the load's start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# An outage whose first error precedes its fault by at most this much still belongs to it
# (the wall clocks of kvperf's timer and kvload are read independently).
CLOCK_SLACK_S = 0.05


def _outages(timeline: Mapping[str, Any]) -> list[tuple[float, float, float | None]]:
    """kvload's outages as wall-clock (from, first error, to) seconds."""
    start = timeline["start_unix_ms"] / 1000
    out = []
    for o in timeline.get("outages") or []:
        to = o["to_ms"]
        out.append((start + o["from_ms"] / 1000, start + o["first_error_ms"] / 1000,
                    None if to is None else start + to / 1000))
    return out


def _window(fault_unix: float, next_fault_unix: float | None,
            outages: Sequence[tuple[float, float, float | None]]
            ) -> dict[str, float | None] | None:
    """The first outage whose errors began at or after this fault and before the next one
    (an outage belongs to the latest fault before it; None: this fault caused no errors)."""
    for begin, first_error, end in outages:
        after_this = first_error >= fault_unix - CLOCK_SLACK_S
        before_next = next_fault_unix is None or first_error < next_fault_unix - CLOCK_SLACK_S
        if after_this and before_next:
            return {"time_to_first_error_s": round(max(0.0, first_error - fault_unix), 4),
                    "unavailable_s": None if end is None else round(end - begin, 4),
                    "unavailable_from_unix": round(begin, 4),
                    "unavailable_to_unix": None if end is None else round(end, 4)}
    return None


def _errors_by_kind(timeline: Mapping[str, Any]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for second in timeline.get("seconds", []):
        for kind, n in second["errors"].items():
            kinds[kind] = kinds.get(kind, 0) + n
    return dict(sorted(kinds.items()))


def _worst(values: list[float]) -> float | None:
    return max(values) if values else None


def _p99_phases(timeline: Mapping[str, Any], first_fault: float,
                outages: Sequence[tuple[float, float, float | None]]) -> dict[str, float | None]:
    start = timeline["start_unix_ms"] / 1000
    spans = [(b, e if e is not None else float("inf")) for b, _, e in outages
             if e is None or e >= first_fault - CLOCK_SLACK_S]
    recovered = max((e for _, e in spans), default=first_fault)
    before, during, after = [], [], []
    for second in timeline.get("seconds", []):
        lo, hi = start + second["t_s"], start + second["t_s"] + 1
        if second["ok"] == 0:
            continue  # no successful reply: no latency to speak of
        if hi <= first_fault:
            before.append(second["p99_ms"])
        elif any(lo < e and hi > b for b, e in spans):
            during.append(second["p99_ms"])
        elif lo >= recovered:
            after.append(second["p99_ms"])
    return {"before": _worst(before), "during": _worst(during), "after": _worst(after)}


def _seconds(timeline: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per second of the stage: successful replies and errors (all kinds), for the
    timeline around the faults."""
    return [{"t_s": s["t_s"], "ok": s["ok"], "errors": sum(s["errors"].values())}
            for s in timeline.get("seconds", [])]


def failover_record(executed: Sequence[Mapping[str, Any]], timeline: Mapping[str, Any],
                    writes: tuple[int, int] | None = None) -> dict[str, Any]:
    """The record from the executed faults (``Executed.record()``), kvload's timeline and
    ``writes`` (acknowledged, lost: server/faults.lost_writes; None: not checked)."""
    outages = _outages(timeline)
    faults = []
    starts = sorted(d["started_unix"] for d in executed)
    for done in executed:
        later = [t for t in starts if t > done["started_unix"]]
        entry = dict(done)
        entry["window"] = _window(done["started_unix"], later[0] if later else None, outages)
        faults.append(entry)
    first = min((d["started_unix"] for d in executed), default=None)
    return {
        "faults": faults,
        "errors_by_kind": _errors_by_kind(timeline),
        "p99_ms": _p99_phases(timeline, first, outages) if first is not None else None,
        "acknowledged_writes": (None if writes is None
                                else {"checked": writes[0], "lost": writes[1]}),
        "start_unix": timeline["start_unix_ms"] / 1000,
        "seconds": _seconds(timeline),
    }
