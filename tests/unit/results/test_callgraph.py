"""Folded stacks rebuilt from a callgrind call graph (pure, hand-computed)."""

from __future__ import annotations

from kvperf.results.callgraph import fold, roots
from kvperf.results.callgrind import parse

# main (self 10) calls set (inclusive 60) and get (inclusive 30); both call lookup, whose
# 40 instructions of self cost are 30 from set's calls and 10 from get's. total 100.
PROFILE = """\
# callgrind format
events: Ir
summary: 100
fn=main
0 10
cfn=set
calls=2 0
0 60
cfn=get
calls=1 0
0 30
fn=set
0 30
cfn=lookup
calls=2 0
0 30
fn=get
0 20
cfn=lookup
calls=1 0
0 10
fn=lookup
0 40
"""


def test_edges_are_kept_and_stacks_split_a_shared_callee_by_its_callers() -> None:
    profile = parse(PROFILE)
    assert profile.edges == {("main", "set"): 60, ("main", "get"): 30,
                             ("set", "lookup"): 30, ("get", "lookup"): 10}
    assert roots(profile) == ["main"]
    stacks = fold(profile)
    assert stacks == {"main": 10, "main;set": 30, "main;get": 20, "main;set;lookup": 30,
                      "main;get;lookup": 10}
    assert sum(stacks.values()) == profile.total


def test_recursion_stops_and_small_paths_are_cut() -> None:
    text = PROFILE + "cfn=set\ncalls=1 0\n0 0\n"  # lookup calls set: a cycle
    assert "main;set;lookup;set" not in fold(parse(text))
    assert "main;get;lookup" not in fold(parse(PROFILE), min_share=0.2)
