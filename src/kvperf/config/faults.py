"""A fault schedule (a config object's ``faults``): what happens to which server node how
far into the measure stage, e.g. ``[{"at": 5, "kill": "primary"}, {"at": 7, "promote":
"replica"}]``.

Actions: ``kill`` (SIGKILL by pid), ``pause`` (SIGSTOP for ``seconds``, then SIGCONT),
``restart`` (SIGKILL, then the same node started again on its port), ``promote``
(standalone: ``REPLICAOF NO ONE`` on the replica) and, for clusters, ``failover``
(``CLUSTER FAILOVER`` on a replica). Targets: ``primary``, ``replica`` and, in a cluster,
``primary-of-slot N``.

Pure: every mistake is a ValueError naming the entry; the loader turns it into exit 2
before any server starts. ``refusal`` says what a topology lacks for a schedule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ACTIONS = ("kill", "pause", "restart", "promote", "failover")
_SLOT = re.compile(r"^primary-of-slot (\d+)$")
SLOTS = 16384


@dataclass(frozen=True)
class Fault:
    """One scheduled action: ``action`` on ``target`` ``at`` seconds into the measure
    stage (``seconds``: how long a pause lasts)."""

    at: float
    action: str
    target: str
    seconds: float | None = None

    @property
    def slot(self) -> int | None:
        """N of a ``primary-of-slot N`` target (None for the other targets)."""
        found = _SLOT.match(self.target)
        return int(found.group(1)) if found else None

    def text(self) -> str:
        extra = f" for {self.seconds:g}s" if self.seconds is not None else ""
        return f"{self.action} {self.target} at {self.at:g}s{extra}"


def _number(entry: str, key: str, value: Any, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ValueError(f"{entry}: {key!r} must be a number >= {minimum:g}, got {value!r}")
    return float(value)


def _target(entry: str, action: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{entry}: {action!r} names its target as a string "
                         "(\"primary\", \"replica\" or \"primary-of-slot N\")")
    found = _SLOT.match(value)
    if value not in ("primary", "replica") and not found:
        raise ValueError(f"{entry}: unknown target {value!r} (\"primary\", \"replica\" or "
                         "\"primary-of-slot N\")")
    if found and int(found.group(1)) >= SLOTS:
        raise ValueError(f"{entry}: slot {found.group(1)} is not a hash slot (0..{SLOTS - 1})")
    if action in ("promote", "failover") and value != "replica":
        raise ValueError(f"{entry}: {action!r} acts on a replica (\"{action}\": \"replica\")")
    return value


def parse_fault(index: int, value: Any) -> Fault:
    """One entry of ``faults`` (ValueError naming it and what is wrong)."""
    entry = f"'faults' entry {index}"
    if not isinstance(value, dict):
        raise ValueError(f"{entry} must be an object like {{\"at\": 5, \"kill\": \"primary\"}}")
    actions = [a for a in ACTIONS if a in value]
    unknown = set(value) - {"at", "seconds", *ACTIONS}
    if unknown:
        raise ValueError(f"{entry}: unknown key {sorted(unknown)[0]!r} (known: at, seconds, "
                         f"{', '.join(ACTIONS)})")
    if len(actions) != 1:
        raise ValueError(f"{entry}: give exactly one action of {', '.join(ACTIONS)} "
                         f"({len(actions)} given)")
    if "at" not in value:
        raise ValueError(f"{entry}: missing 'at' (seconds into the measure stage)")
    action = actions[0]
    at = _number(entry, "at", value["at"], 0)
    seconds = None
    if action == "pause":
        if "seconds" not in value:
            raise ValueError(f"{entry}: a pause needs 'seconds' (how long SIGSTOP lasts)")
        seconds = _number(entry, "seconds", value["seconds"], 0.001)
    elif "seconds" in value:
        raise ValueError(f"{entry}: 'seconds' belongs to a pause, not to {action!r}")
    return Fault(at, action, _target(entry, action, value[action]), seconds)


def from_config(key: str, value: Any) -> tuple[Fault, ...]:
    """The ``faults`` key: a list of entries, sorted by time."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{key!r} must be a non-empty list of fault objects")
    return tuple(sorted((parse_fault(i, v) for i, v in enumerate(value)),
                        key=lambda f: f.at))


def refusal(faults: tuple[Fault, ...], *, cluster: bool, replicas: int,
            duration: int | None) -> str | None:
    """What the topology or the run lacks for ``faults``, or None."""
    if not faults:
        return None
    if duration is None:
        return "'faults' need a time-bounded run ('duration', not 'requests')"
    late = [f for f in faults if f.at >= duration]
    if late:
        return f"fault '{late[0].text()}' comes after the measure stage ({duration}s) ends"
    for f in faults:
        if f.target == "replica" and replicas == 0:
            return (f"fault '{f.text()}' needs a replica: the topology has none "
                    "(\"replicas\": 1)")
        if f.action == "failover" and not cluster:
            return (f"fault '{f.text()}': CLUSTER FAILOVER needs a cluster; a standalone "
                    "replica is promoted with \"promote\"")
        if f.action == "promote" and cluster:
            return f"fault '{f.text()}': in a cluster a replica takes over with \"failover\""
        if f.slot is not None and not cluster:
            return f"fault '{f.text()}': 'primary-of-slot N' needs cluster_mode"
    return None
