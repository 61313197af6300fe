"""A staircase ramp (a config object's ``staircase``; memtier's ``--clients-start``,
``--clients-step``, ``--step-duration``): one trial starts with ``start`` connections and
adds ``step`` more every ``step_seconds`` up to its ``clients``; kvload measures each step
on its own, so the row records the curve connections → rps, p50, p99.

Pure: every mistake is a ValueError naming the setting; the config loader turns it into
exit 2 with the key named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEYS = ("start", "step", "step_seconds")


@dataclass(frozen=True)
class Staircase:
    """The ramp of one trial (connections over all of kvload's threads)."""

    start: int
    step: int
    step_seconds: int

    def argv(self) -> list[str]:
        """kvload's flags for it."""
        return ["--clients-start", str(self.start), "--clients-step", str(self.step),
                "--step-duration", str(self.step_seconds)]

    def params(self) -> dict[str, int]:
        """What a trial's identity (and the row) records of it."""
        return {"start": self.start, "step": self.step, "step_seconds": self.step_seconds}


def staircase_from_config(key: str, value: Any) -> Staircase:
    """``{"start": 10, "step": 10, "step_seconds": 5}`` → Staircase (ValueError otherwise)."""
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object like "
                         "{\"start\": 10, \"step\": 10, \"step_seconds\": 5}")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise ValueError(f"{key!r} has unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    missing = [k for k in KEYS if k not in value]
    if missing:
        raise ValueError(f"{key!r} needs {', '.join(repr(k) for k in missing)} "
                         "(memtier's --clients-start, --clients-step and --step-duration "
                         "must all be given together)")
    for k in KEYS:
        v = value[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{key!r}: {k!r} must be a positive integer, got {v!r}")
    return Staircase(value["start"], value["step"], value["step_seconds"])


def staircase_refusal(ramp: Staircase, clients: tuple[int, ...], timed: bool) -> str | None:
    """What memtier refuses of a ramp with these clients (each must exceed ``start``) and
    run length (it needs a duration, not a request count); None when it runs."""
    if not timed:
        return "'staircase' needs 'duration' (a ramp is timed; memtier refuses --requests)"
    low = [c for c in clients if c <= ramp.start]
    if low:
        return (f"'staircase': 'start' ({ramp.start}) must be less than 'clients' "
                f"({low[0]}), the connections at full ramp")
    return None
