"""The row's instructions object from a profile (hand-computed)."""

from __future__ import annotations

from kvperf.results.callgrind import parse
from kvperf.results.instructions import implementation_function, summarize, time_driven

PROFILE = """\
# callgrind format
events: Ir
summary: 1000
fn=(1) aeMain
1 100
cfn=(2) call
calls=10 1
1 900
fn=(2)
1 50
cfn=(3) setCommand
calls=10 1
1 600
cfn=(4) hsetCommand
calls=5 1
1 250
fn=(3)
1 600
fn=(4)
1 250
"""


def test_summary_per_request_and_per_call() -> None:
    # 1000 instructions / 10 requests = 100; setCommand 600 inclusive / 10 calls = 60
    ins = summarize(parse(PROFILE), 10, "SET", ["trials/x/callgrind.out.measure.node0"])
    assert ins["total"] == 1000 and ins["total_per_request"] == 100.0
    assert ins["function"] == "setCommand" and ins["function_calls"] == 10
    assert ins["command_per_call"] == 60.0
    assert ins["function_inclusive_per_call"] == {"setCommand": 60.0}
    assert ins["top_functions"] == {"aeMain": 100.0, "call": 90.0, "setCommand": 60.0,
                                    "hsetCommand": 25.0}
    assert ins["callgrind_files"] == ["trials/x/callgrind.out.measure.node0"]


def test_function_from_table_heuristic_case_and_fallback() -> None:
    profile = parse(PROFILE)
    assert implementation_function("HMSET", profile) == "hsetCommand"  # the table
    assert implementation_function("hset", profile) == "hsetCommand"  # <lower>Command
    renamed = parse(PROFILE.replace("setCommand", "SetCommand"))
    assert implementation_function("SET", renamed) == "SetCommand"  # case-insensitive
    assert implementation_function("PING", profile) == "call"  # not executed → call
    assert implementation_function("PING", parse("# callgrind format\nevents: Ir\n")) is None


def test_time_events_are_left_out_of_the_per_request_total() -> None:
    # aeMain 1000 = 100 self + 900 (call) ; add a timer: aeMain also runs processTimeEvents
    # for 300 → total 1300, of which 300 time-driven: (1300 - 300) / 10 = 100 per request
    text = PROFILE.replace("summary: 1000", "summary: 1300").replace(
        "fn=(2)\n1 50", "cfn=(9) processTimeEvents\ncalls=3 1\n1 300\nfn=(2)\n1 50"
    ) + "fn=(9)\n1 300\n"
    ins = summarize(parse(text), 10, "SET", [])
    assert ins["timer_events"] == 300 and ins["total_per_request"] == 100.0
    assert ins["total_with_timers_per_request"] == 130.0


def test_functions_only_the_time_events_reach_are_not_ranked() -> None:
    # aeMain runs processTimeEvents (300), which runs serverCron (280), which runs
    # cronUpdateMemoryStats (200) and zmalloc_used (30); the requests' setCommand calls
    # zmalloc_used too, so it stays; the three time-driven functions leave top_functions
    text = PROFILE.replace("summary: 1000", "summary: 1300").replace(
        "fn=(2)\n1 50", "cfn=(9) processTimeEvents\ncalls=3 1\n1 300\nfn=(2)\n1 50"
    ).replace("fn=(3)\n1 600", "fn=(3)\n1 590\ncfn=(8) zmalloc_used\ncalls=10 1\n1 10") + (
        "fn=(9)\n1 20\ncfn=(10) serverCron\ncalls=3 1\n1 280\n"
        "fn=(10)\n1 50\ncfn=(11) cronUpdateMemoryStats\ncalls=3 1\n1 200\n"
        "cfn=(8)\ncalls=3 1\n1 30\n"
        "fn=(11)\n1 200\nfn=(8)\n1 40\n")
    profile = parse(text)
    assert time_driven(profile) == {"processTimeEvents", "serverCron", "cronUpdateMemoryStats"}
    ins = summarize(profile, 10, "SET", [])
    assert ins["timer_events"] == 300 and ins["total_per_request"] == 100.0
    assert set(ins["top_functions"]) == {"aeMain", "call", "setCommand", "hsetCommand",
                                         "zmalloc_used"}
    assert ins["top_functions"]["zmalloc_used"] == 4.0  # 10 from setCommand + 30 from the timer
