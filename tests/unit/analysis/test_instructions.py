"""The instruction-count decision and the moved-functions ranking, on hand-computed values."""

from __future__ import annotations

import math

import pytest

from kvperf.analysis.instructions import (
    InstructionVerdict,
    compare_instructions,
    decide,
    moved_functions,
    relative_spread,
)


def test_relative_spread_by_hand() -> None:
    # (101 - 99) / 100 = 2%
    assert relative_spread([99.0, 101.0]) == pytest.approx(0.02)
    assert math.isnan(relative_spread([5.0]))


def test_flagged_beyond_min_effect_and_five_spreads() -> None:
    # base mean 1000, spread 2/1000 = 0.2%; new mean 1030 → +3%; threshold max(0.5%, 1%) = 1%
    d = decide([999.0, 1001.0], [1030.0, 1030.0])
    assert d.verdict is InstructionVerdict.REGRESSION and d.flagged
    assert d.change == pytest.approx(0.03) and d.threshold == pytest.approx(0.01)
    assert decide([1030.0, 1030.0], [999.0, 1001.0]).verdict is InstructionVerdict.IMPROVEMENT


def test_a_change_inside_five_spreads_is_within_noise() -> None:
    # spread (1010 - 990) / 1000 = 2% → threshold 10%; change +3% is beyond 0.5% but inside
    d = decide([990.0, 1010.0], [1030.0, 1030.0])
    assert d.verdict is InstructionVerdict.WITHIN_NOISE and d.threshold == pytest.approx(0.10)


def test_small_changes_are_no_change_even_without_spread() -> None:
    # identical runs: spread 0, threshold = min effect 0.5%; +0.4% is no change
    assert decide([1000.0, 1000.0], [1004.0, 1004.0]).verdict is InstructionVerdict.NO_CHANGE
    # +0.6% beats both 0.5% and 5 × 0 → flagged; a 1% minimum effect turns it into no change
    assert decide([1000.0, 1000.0], [1006.0, 1006.0]).flagged
    assert decide([1000.0, 1000.0], [1006.0, 1006.0], min_effect=0.01).verdict \
        is InstructionVerdict.NO_CHANGE


def test_one_run_is_never_a_verdict() -> None:
    d = decide([1000.0], [2000.0, 2000.0])
    assert d.verdict is InstructionVerdict.INSUFFICIENT_DATA and d.change == pytest.approx(1.0)


def test_the_most_specific_function_of_a_similar_move_comes_first() -> None:
    # setCommand +56 moves call (+56.5) and aeMain (+58) too; the noise in dictFind is -3.
    base = [{"aeMain": 5000.0, "call": 3000.0, "setCommand": 1800.0, "dictFind": 300.0}] * 2
    new = [{"aeMain": 5058.0, "call": 3056.5, "setCommand": 1856.0, "dictFind": 297.0}] * 2
    moved = moved_functions(base, new)
    assert [m.name for m in moved] == ["setCommand", "call", "aeMain", "dictFind"]
    assert moved[0].delta == pytest.approx(56.0) and moved[0].change == pytest.approx(56 / 1800)


def test_moved_functions_average_runs_and_count_missing_as_zero() -> None:
    # f: base (10 + 10.2) / 2 = 10.1, new 30 → +19.9; g only on the new side → +4 ("new")
    moved = moved_functions([{"f": 10.0}, {"f": 10.2}], [{"f": 30.0, "g": 4.0},
                                                          {"f": 30.0, "g": 4.0}])
    assert [(m.name, round(m.delta, 6)) for m in moved] == [("f", 19.9), ("g", 4.0)]
    assert math.isinf(moved[1].change)
    assert moved_functions([{"f": 1.0}], [{"f": 1.0}]) == []
    assert len(moved_functions([{str(i): 1.0 for i in range(30)}], [{}], count=10)) == 10


def _row(command: str, run: int, total: float, per_call: float, fn: str) -> dict[str, object]:
    return {"status": "ok", "command": command, "pipeline": 16, "run": run,
            "instructions": {"total_per_request": total, "command_per_call": per_call,
                             "function": fn, "top_functions": {fn: per_call}}}


def test_compare_instructions_per_series() -> None:
    a = [_row("SET", 1, 5000.0, 1800.0, "setCommand"), _row("SET", 2, 5002.0, 1800.0,
                                                          "setCommand"),
         _row("GET", 1, 4000.0, 600.0, "getCommand"), _row("GET", 2, 4001.0, 600.0,
                                                         "getCommand")]
    b = [_row("SET", 1, 5056.0, 1856.0, "setCommand"), _row("SET", 2, 5058.0, 1856.0,
                                                          "setCommand"),
         _row("GET", 1, 4000.5, 600.0, "getCommand"), _row("GET", 2, 4000.5, 600.0,
                                                         "getCommand")]
    results = {dict(s.group)["command"]: s for s in compare_instructions(a, b)}
    assert results["SET"].flagged and not results["GET"].flagged
    labels = [m.label for m in results["SET"].metrics]
    assert labels == ["instructions/request", "setCommand inclusive/call"]
    assert results["SET"].moved[0].name == "setCommand"
    assert results["GET"].moved == []
    assert compare_instructions([{"status": "ok", "command": "SET"}], a[:1]) == []


def test_functions_at_the_cut_of_the_top_list_are_left_out() -> None:
    # h is listed in one base run only (at the cut): unknown, not halved; g is absent from
    # every base run: new (0 → 5)
    base = [{"f": 10.0, "h": 2.0}, {"f": 10.0}]
    new = [{"f": 12.0, "g": 5.0, "h": 2.0}, {"f": 12.0, "g": 5.0, "h": 2.0}]
    assert [(m.name, m.base, m.new) for m in moved_functions(base, new)] == [
        ("g", 0.0, 5.0), ("f", 10.0, 12.0)]


def test_functions_moving_within_their_own_noise_are_left_out() -> None:
    # cron: 100/150 on A (spread 40%), 180/180 on B: +44% < 5 × 40% → noise; s: +1% with
    # no spread → kept
    base = [{"cron": 100.0, "s": 1000.0}, {"cron": 150.0, "s": 1000.0}]
    new = [{"cron": 180.0, "s": 1010.0}, {"cron": 180.0, "s": 1010.0}]
    assert [m.name for m in moved_functions(base, new)] == ["s"]
