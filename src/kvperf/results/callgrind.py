"""Parsing callgrind profile files into per-function self and inclusive costs (pure).

The format is valgrind's "Callgrind Format Specification" (docs/cl-format.html, format
version 1): a header (``events:``, ``positions:``, ``summary:``/``totals:``), then blocks
opened by ``fn=`` whose cost lines are ``<positions> <costs…>``. A ``calls=<n> <target>``
line announces a call to the function named by the preceding ``cfn=``; the cost line right
after it is the *inclusive* cost of those calls, charged to the caller's inclusive cost but
not to its self cost. Names may be compressed: ``fn=(id) name`` defines an id, ``fn=(id)``
reuses it; ``fn`` and ``cfn`` share one table (the spec's "name compression").

Inclusive cost of F = self cost of F + the inclusive cost of every call F makes to another
function (calls of F to itself are not added again: a directly recursive function is not
counted twice; mutual recursion still is, as in ``callgrind_annotate --inclusive=yes``).
Functions are keyed by name only: a static function of the same name in two files is summed.
Several parts (dumps) in one text, and several files, are summed by ``merge``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EVENT = "Ir"
_NAME = re.compile(r"^\((\d+)\)(?:\s(.*))?$")


@dataclass
class FunctionCost:
    """One function's cost in the profiled event (``Ir``: instructions executed)."""

    self_cost: int = 0
    inclusive: int = 0
    calls: int = 0  # how many times it was called (sum of calls= lines targeting it)


@dataclass
class Profile:
    """A parsed profile: the total of the event and the cost of every function."""

    total: int = 0
    functions: dict[str, FunctionCost] = field(default_factory=dict)
    command: str | None = None
    # (caller, callee) → the inclusive cost of the caller's calls to it (self-calls left out)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)

    def function(self, name: str) -> FunctionCost:
        return self.functions.setdefault(name, FunctionCost())

    def top_inclusive(self, count: int) -> list[tuple[str, FunctionCost]]:
        """The ``count`` functions with the largest inclusive cost (ties by name)."""
        ranked = sorted(self.functions.items(), key=lambda item: (-item[1].inclusive, item[0]))
        return ranked[:count]


class CallgrindFormatError(ValueError):
    """The text is not a callgrind profile this parser understands."""


@dataclass
class _State:
    """Parser state while walking the lines."""

    profile: Profile
    names: dict[str, str] = field(default_factory=dict)
    position_count: int = 1
    event_index: int = 0
    fn: str | None = None
    cfn: str | None = None
    pending_calls: int | None = None
    summary: int | None = None
    totals: int | None = None
    self_sum: int = 0


def _resolve(state: _State, value: str) -> str:
    """A (possibly compressed) function name: ``(id) name`` defines, ``(id)`` looks up."""
    match = _NAME.match(value.strip())
    if not match:
        return value.strip()
    ident, name = match.group(1), match.group(2)
    if name is not None:
        state.names[ident] = name
        return name
    if ident not in state.names:
        raise CallgrindFormatError(f"function id ({ident}) used before it was named")
    return state.names[ident]


def _cost(state: _State, line: str) -> int:
    """The event's value on a cost line (positions first; missing trailing costs are 0)."""
    parts = line.split()
    costs = parts[state.position_count:]
    if state.event_index >= len(costs):
        return 0
    try:
        return int(costs[state.event_index])
    except ValueError:
        raise CallgrindFormatError(f"bad cost line: {line!r}") from None


def _header(state: _State, key: str, value: str) -> bool:
    """Handle a header line; False when ``key`` is not a header key."""
    if key == "events":
        events = value.split()
        if EVENT not in events:
            raise CallgrindFormatError(f"no {EVENT} event in 'events: {value}'")
        state.event_index = events.index(EVENT)
    elif key == "positions":
        state.position_count = len(value.split())
    elif key in ("summary", "totals"):
        numbers = value.split()
        number = int(numbers[state.event_index]) if len(numbers) > state.event_index else 0
        setattr(state, key, (getattr(state, key) or 0) + number)  # summed over parts
    elif key == "cmd":
        state.profile.command = value.strip()
    else:
        return key in ("version", "creator", "pid", "part", "desc", "thread", "event")
    return True


def _spec_line(state: _State, key: str, value: str) -> None:
    if key == "fn":
        state.fn = _resolve(state, value)
        state.profile.function(state.fn)
    elif key == "cfn":
        state.cfn = _resolve(state, value)
    elif key == "calls":
        state.pending_calls = int(value.split()[0])
    # ob, fl, fi, fe, cob, cfi, cfl, jump, jcnd: names and positions kvperf does not need


def _cost_line(state: _State, line: str) -> None:
    cost = _cost(state, line)
    if state.fn is None:
        raise CallgrindFormatError(f"cost line before any fn=: {line!r}")
    caller = state.profile.function(state.fn)
    if state.pending_calls is not None:
        callee_name = state.cfn or state.fn
        state.profile.function(callee_name).calls += state.pending_calls
        if callee_name != state.fn:
            caller.inclusive += cost
            edge = (state.fn, callee_name)
            state.profile.edges[edge] = state.profile.edges.get(edge, 0) + cost
        state.pending_calls = None
        return
    caller.self_cost += cost
    caller.inclusive += cost
    state.self_sum += cost


def _line(state: _State, line: str) -> None:
    if not line or line.startswith("#"):
        return
    if line[0].isdigit() or line[0] in "+-*":
        _cost_line(state, line)
        return
    key, sep, value = line.partition("=")
    if sep and key.isalpha():
        _spec_line(state, key, value)
        return
    key, sep, value = line.partition(":")
    if not sep or not _header(state, key.strip(), value.strip()):
        raise CallgrindFormatError(f"unrecognised line: {line[:80]!r}")


def parse(text: str) -> Profile:
    """Parse one callgrind file's text (any number of parts) into a Profile."""
    state = _State(Profile())
    lines = text.splitlines()
    if not lines or not (lines[0].startswith("# callgrind format") or
                         any(ln.startswith("events:") for ln in lines[:50])):
        raise CallgrindFormatError("not a callgrind file (no '# callgrind format' header)")
    for line in lines:
        _line(state, line.strip())
    declared = state.totals if state.totals is not None else state.summary
    state.profile.total = declared if declared is not None else state.self_sum
    return state.profile


def merge(profiles: list[Profile]) -> Profile:
    """Sum several profiles (cluster nodes, or several dumps) function by function."""
    merged = Profile(command=profiles[0].command if profiles else None)
    for profile in profiles:
        merged.total += profile.total
        for name, cost in profile.functions.items():
            into = merged.function(name)
            into.self_cost += cost.self_cost
            into.inclusive += cost.inclusive
            into.calls += cost.calls
        for edge, cost_of_calls in profile.edges.items():
            merged.edges[edge] = merged.edges.get(edge, 0) + cost_of_calls
    return merged
