"""The callgrind parser on hand-written profiles (costs worked out by hand in comments)."""

from __future__ import annotations

import pytest

from kvperf.results.callgrind import CallgrindFormatError, merge, parse

# main: self 3+2 = 5; calls setCommand twice (inclusive 40) and helper once (7) → 52.
# setCommand: self 10+6 = 16 (two calls), calls helper 4 times (inclusive 24) → 40.
# helper: self 7 (main's call) + 24 (setCommand's calls) = 31, no callees → 31.
SIMPLE = """\
# callgrind format
version: 1
creator: hand
cmd: valkey-server --port 1
positions: line
events: Ir
summary: 52

ob=(1) /bin/server
fl=(1) server.c
fn=(1) main
10 3
cfn=(2) setCommand
calls=2 20
11 40
+1 2
cfn=(3) helper
calls=1 30
* 7

fn=(2)
20 10
cfn=(3)
calls=4 30
21 24
+2 6

fn=(3)
30 31
"""


def test_self_inclusive_and_calls_by_hand() -> None:
    profile = parse(SIMPLE)
    assert profile.total == 52
    assert profile.command == "valkey-server --port 1"
    main, setc, helper = (profile.functions[n] for n in ("main", "setCommand", "helper"))
    assert (main.self_cost, main.inclusive, main.calls) == (5, 52, 0)
    assert (setc.self_cost, setc.inclusive, setc.calls) == (16, 40, 2)
    assert (helper.self_cost, helper.inclusive, helper.calls) == (31, 31, 5)
    assert [n for n, _ in profile.top_inclusive(2)] == ["main", "setCommand"]


def test_two_positions_second_event_and_recursion() -> None:
    # positions: instr line → two position columns; Ir is the 2nd event.
    # rec: self 4+1 = 5; its call to itself (inclusive 9) is not added again → 5.
    text = """\
# callgrind format
positions: instr line
events: Dr Ir
fn=(1) rec
0x10 5 100 4
cfn=(1)
calls=3 0x10 5
0x12 6 50 9
+1 +1 7 1
totals: 0 5
"""
    rec = parse(text).functions["rec"]
    assert (rec.self_cost, rec.inclusive, rec.calls) == (5, 5, 3)
    assert parse(text).total == 5


def test_missing_trailing_cost_is_zero_and_total_falls_back_to_sum() -> None:
    text = "# callgrind format\nevents: Ir Dr\nfn=a\n1 4\n2\n3 6 1\n"
    profile = parse(text)
    assert profile.functions["a"].self_cost == 10 and profile.total == 10


def test_parts_and_merge_are_summed() -> None:
    two_parts = SIMPLE + "\npart: 2\nsummary: 52\nfn=(1)\n10 8\n"
    profile = parse(two_parts)
    assert profile.total == 104 and profile.functions["main"].self_cost == 13
    merged = merge([parse(SIMPLE), parse(SIMPLE)])
    assert merged.total == 104
    assert merged.functions["setCommand"].inclusive == 80
    assert merged.functions["helper"].calls == 10


@pytest.mark.parametrize(("text", "message"), [
    ("hello\n", "not a callgrind file"),
    ("# callgrind format\nevents: Dr\n", "no Ir event"),
    ("# callgrind format\nevents: Ir\nfn=(7)\n1 2\n", "used before it was named"),
    ("# callgrind format\nevents: Ir\n1 2\n", "before any fn="),
    ("# callgrind format\nevents: Ir\nfn=a\n1 x\n", "bad cost line"),
    ("# callgrind format\nevents: Ir\nwhat is this\n", "unrecognised line"),
])
def test_bad_input_is_named(text: str, message: str) -> None:
    with pytest.raises(CallgrindFormatError, match=message):
        parse(text)
