"""The instruction-count decision and the moved-functions ranking, on hand-computed values."""

from __future__ import annotations

import math

import pytest

from kvperf.analysis.instructions import (
    InstructionDecision,
    compare_instructions,
    moved_functions,
    relative_spread,
)
from kvperf.analysis.verdict import Verdict


def test_relative_spread_by_hand() -> None:
    # (101 - 99) / 100 = 2%
    assert relative_spread([99.0, 101.0]) == pytest.approx(0.02)
    assert math.isnan(relative_spread([5.0]))


def _judged(base: list[float], new: list[float], min_effect: float = 0.005
            ) -> InstructionDecision:
    """One series' instructions/request judged by the shared rule."""
    a = [_row("SET", i, v, 1800.0, "setCommand") for i, v in enumerate(base)]
    b = [_row("SET", i, v, 1800.0, "setCommand") for i, v in enumerate(new)]
    return compare_instructions(a, b, min_effect)[0].metrics[0].decision


def test_flagged_when_significant_and_beyond_the_minimum_effect() -> None:
    # logs of 999, 1001 vs 1030, 1030: d = 0.0305, pooled sd 0.0014, se 0.0014 on 2 df:
    # t ≈ 21.6, p ≈ 0.002 ≤ 0.01 (one series: no correction), +3% beyond 0.5%
    d = _judged([999.0, 1001.0], [1030.0, 1030.0])
    assert d.verdict is Verdict.REGRESSION and d.flagged
    assert d.change == pytest.approx(0.03) and d.threshold == pytest.approx(0.005)
    assert d.spread == pytest.approx(0.002)
    assert _judged([1030.0, 1030.0], [999.0, 1001.0]).verdict is Verdict.IMPROVEMENT


def test_a_change_the_spread_cannot_settle_is_inconclusive() -> None:
    # spread ±1% on 2 runs per side: t ≈ 2.1 on 2 df for +3%
    d = _judged([990.0, 1010.0], [1030.0, 1030.0])
    assert d.verdict is Verdict.INCONCLUSIVE and d.reason.startswith("needs ~")


def test_constant_sides_are_exact() -> None:
    # identical runs: any change beyond the minimum effect is flagged, inside it no change
    assert _judged([1000.0, 1000.0], [1004.0, 1004.0]).verdict is Verdict.NO_CHANGE
    assert _judged([1000.0, 1000.0], [1006.0, 1006.0]).flagged
    assert _judged([1000.0, 1000.0], [1006.0, 1006.0], min_effect=0.01).verdict \
        is Verdict.NO_CHANGE


def test_one_run_per_side_uses_the_minimum_effect_as_water_line() -> None:
    d = _judged([1000.0], [1010.0])
    assert d.verdict is Verdict.REGRESSION and not d.statistics
    assert d.reason.startswith("single sample, no statistics: +1.0% vs the ±0.5% water line")


def test_the_most_specific_function_of_a_similar_move_comes_first() -> None:
    # setCommand +56 moves call (+56.5) and aeMain (+58) too; the noise in dictFind is -3.
    base = [{"aeMain": 5000.0, "call": 3000.0, "setCommand": 1800.0, "dictFind": 300.0}] * 2
    new = [{"aeMain": 5058.0, "call": 3056.5, "setCommand": 1856.0, "dictFind": 297.0}] * 2
    moved = moved_functions(base, new)
    assert [m.name for m in moved] == ["setCommand", "call", "aeMain", "dictFind"]
    assert moved[0].delta == pytest.approx(56.0) and moved[0].change == pytest.approx(56 / 1800)


def test_a_callers_own_noise_does_not_push_the_changed_function_down() -> None:
    # A CI run: setCommand +115.7 moved call and processCommand by as much, and aeMain by
    # +155.7 (+40 of the event loop's own batching noise): setCommand still comes first.
    base = [{"aeMain": 5905.6, "processCommand": 3342.0, "call": 2704.0,
             "setCommand": 2054.2}] * 2
    new = [{"aeMain": 6061.2, "processCommand": 3457.7, "call": 2819.7,
            "setCommand": 2169.9}] * 2
    assert [m.name for m in moved_functions(base, new)][:2] == ["setCommand", "call"]


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
