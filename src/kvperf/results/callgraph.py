"""Folded stacks from a callgrind profile's call graph, for an instruction-count flamegraph
(pure).

Callgrind records costs per call edge, not per stack, so the stacks are reconstructed the way
gprof-style tools do: from each root (a function nobody calls), a function's self cost is
split among the paths reaching it in proportion to the inclusive cost each caller's calls
carry (a function's cost is assumed the same per call whoever calls it). Recursion stops at a
function already on the stack, and paths carrying less than ``MIN_SHARE`` of the total are
cut: the graph is deterministic, like the counts it comes from.
"""

from __future__ import annotations

from collections import Counter

from kvperf.results.callgrind import Profile

MIN_SHARE = 1e-5
MAX_DEPTH = 128


def _callees(profile: Profile) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for (caller, callee), cost in sorted(profile.edges.items()):
        out.setdefault(caller, []).append((callee, cost))
    return out


def roots(profile: Profile) -> list[str]:
    """Functions with a cost that no other function calls."""
    called = {callee for _, callee in profile.edges}
    return sorted(name for name, cost in profile.functions.items()
                  if name not in called and cost.inclusive > 0)


def fold(profile: Profile, min_share: float = MIN_SHARE) -> Counter[str]:
    """Stack (``root;…;function``) → instructions attributed to it."""
    callees = _callees(profile)
    floor = profile.total * min_share
    stacks: Counter[str] = Counter()

    def walk(path: list[str], share: float) -> None:
        name = path[-1]
        cost = profile.functions[name]
        stacks[";".join(path)] += round(cost.self_cost * share)
        if len(path) >= MAX_DEPTH:
            return
        for callee, cost_of_calls in callees.get(name, []):
            inclusive = profile.functions[callee].inclusive
            if callee in path or not inclusive:
                continue
            carried = cost_of_calls * share
            if carried >= floor:
                walk([*path, callee], carried / inclusive)

    for root in roots(profile):
        walk([root], 1.0)
    return Counter({stack: n for stack, n in stacks.items() if n > 0})
