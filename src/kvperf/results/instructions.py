"""A trial's instruction counts as stored in its metrics.json row (pure).

``instructions`` in a row (format 2):
  tool                  "callgrind" or "perf"
  total                 instructions the server executed during the measure stage (all nodes)
  requests              the requests the load tool counted
  timer_events          of which in time-driven work (``processTimeEvents``: serverCron …)
  total_per_request     (total − timer_events) ÷ requests: the work the requests caused
  total_with_timers_per_request   total ÷ requests
  function              the command's implementation function (e.g. ``setCommand``), or null
  function_calls        how often callgrind saw it called
  command_per_call      its inclusive cost ÷ its calls
  function_inclusive_per_call   {function: command_per_call}
  top_functions         the TOP_FUNCTIONS largest inclusive costs, per request {name: cost},
                        of the functions the requests reach (``time_driven`` ones left out)

Time-driven work is left out of ``total_per_request``: serverCron runs ``hz`` times per
*second*, so under callgrind (~50× slower) its share per request grows with the slowdown and
varies with how long the stage took — ±1% per request with jemalloc's statistics refresh in
it, measured here — while the work of the requests themselves repeats to ~0.05%.
  callgrind_files       the measure-stage profiles, relative to metrics.json
"""

from __future__ import annotations

from kvperf.results.callgrind import Profile
from kvperf.results.records import InstructionsRecord

TOP_FUNCTIONS = 200
TIMER_FUNCTIONS = ("processTimeEvents", "serverCron")  # first one present
FALLBACK_FUNCTION = "call"  # Valkey's dispatcher: every command runs inside call()

# Commands whose implementation is not simply <lowercase name>Command (Valkey's commands.def).
FUNCTION_NAMES = {
    "hmset": "hsetCommand", "evalsha": "evalShaCommand", "evalsha_ro": "evalShaRoCommand",
    "eval_ro": "evalRoCommand", "fcall_ro": "fcallroCommand", "getdel": "getdelCommand",
    "zrevrange": "zrevrangeCommand", "psetex": "psetexCommand", "setnx": "setnxCommand",
}


def implementation_function(command: str, profile: Profile) -> str | None:
    """The function that implements ``command`` (its first word) in this profile.

    The explicit table first, then ``<lower>Command``, then a case-insensitive match, then
    ``call`` (inclusive of any command); None when none of them was executed.
    """
    name = command.split()[0].lower() if command.split() else ""
    for candidate in (FUNCTION_NAMES.get(name), f"{name}Command"):
        cost = profile.functions.get(candidate) if candidate else None
        if cost and cost.calls:
            return candidate
    folded = {n.lower(): n for n, cost in profile.functions.items() if cost.calls}
    found = folded.get(f"{name}command")
    if found:
        return found
    return FALLBACK_FUNCTION if FALLBACK_FUNCTION in folded.values() else None


def _per(value: int, count: int | None) -> float | None:
    return round(value / count, 3) if count else None


def _timer_root(profile: Profile) -> str | None:
    for name in TIMER_FUNCTIONS:
        cost = profile.functions.get(name)
        if cost and cost.inclusive:
            return name
    return None


def timer_cost(profile: Profile) -> int:
    """Inclusive instructions of the server's time events (0 when none ran)."""
    root = _timer_root(profile)
    return profile.functions[root].inclusive if root else 0


def time_driven(profile: Profile) -> set[str]:
    """Functions only the time events reach: their root and every function whose callers
    are all time-driven (serverCron, cronUpdateMemoryStats, jemalloc's statistics refresh).
    Their cost per request follows the wall clock, so they are left out of the functions
    ranked by how much they moved, as from ``total_per_request``. A function the requests
    call too stays (conservative: recursion under the timer stays as well)."""
    root = _timer_root(profile)
    if root is None:
        return set()
    callers: dict[str, set[str]] = {}
    callees: dict[str, set[str]] = {}
    for caller, callee in profile.edges:
        callers.setdefault(callee, set()).add(caller)
        callees.setdefault(caller, set()).add(callee)
    driven, todo = {root}, [root]
    while todo:
        for callee in callees.get(todo.pop(), ()):
            if callee not in driven and callers[callee] <= driven:
                driven.add(callee)
                todo.append(callee)
    return driven


def summarize(profile: Profile, requests: int | None, command: str,
              files: list[str]) -> InstructionsRecord:
    """The row's ``instructions`` object from a measure-stage callgrind profile."""
    timers = timer_cost(profile)
    function = implementation_function(command, profile)
    cost = profile.functions[function] if function else None
    per_call = _per(cost.inclusive, cost.calls) if cost else None
    driven = time_driven(profile)
    ranked = [(name, c) for name, c in profile.top_inclusive(TOP_FUNCTIONS + len(driven))
              if name not in driven][:TOP_FUNCTIONS]
    top = {name: _per(c.inclusive, requests) for name, c in ranked}
    return {
        "tool": "callgrind", "total": profile.total, "requests": requests,
        "timer_events": timers, "total_per_request": _per(profile.total - timers, requests),
        "total_with_timers_per_request": _per(profile.total, requests),
        "function": function, "function_calls": cost.calls if cost else None,
        "command_per_call": per_call,
        "function_inclusive_per_call": {function: per_call} if function else {},
        "top_functions": top if requests else {},
        "callgrind_files": files,
    }


def from_perf(total: int, requests: int | None) -> InstructionsRecord:
    """The row's ``instructions`` object from a ``perf stat`` count (no per-function data)."""
    return {"tool": "perf", "total": total, "requests": requests,
            "total_per_request": _per(total, requests)}
