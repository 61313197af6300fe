"""`kvperf bisect`'s pure decisions: series and metric names, marks, the next commit, the end."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kvperf.analysis.bisect import (
    Mark,
    check_metric,
    classify,
    effects,
    max_steps,
    more_runs,
    next_candidate,
    outcome,
    parse_series,
    pick_series,
)
from kvperf.analysis.comparison import GroupKey
from kvperf.analysis.verdict import Verdict
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure


def _key(command: str, pipeline: int, **extra: Any) -> GroupKey:
    fields = {"command": command, "data_size": 64, "pipeline": pipeline, "clients": 1,
              "io_threads": None, "cluster_mode": False, "tls": False, **extra}
    return tuple(fields.items())


PLAN = [_key("SET", 1), _key("SET", 16), _key("GET", 16), _key("GET", 16, tls=True)]


def test_series_names_pick_one_series() -> None:
    assert pick_series("SET P=16", PLAN) == PLAN[1]
    assert pick_series("set pipeline=16 d=64", PLAN) == PLAN[1]
    assert pick_series("GET P=16 tls", PLAN) == PLAN[3]
    assert pick_series(None, PLAN[:1]) == PLAN[0]


@pytest.mark.parametrize(("text", "message"), [
    ("SET", "matches 2 series"), ("INCR", "matches no series"), ("GET P=16", "matches 2"),
    ("SET P=x", "'P=x' is not key=number"), ("SET q=1", "'q=1' is not key=number"),
    ("P=16", "expected 'COMMAND key=value"), ("", "expected")])
def test_bad_series_names_say_what_exists(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        pick_series(text, PLAN)


def test_a_series_is_required_with_several() -> None:
    with pytest.raises(UsageError, match=r"4 series: name one with --series.*'SET d=64 P=1 c=1'"):
        pick_series(None, PLAN)
    assert parse_series("SET P=16 cluster_mode").flags == ("cluster_mode",)


def test_metric_names_are_row_paths_of_the_measure() -> None:
    assert check_metric(None, Measure.INSTRUCTIONS) == "instructions.total_per_request"
    assert check_metric(None, Measure.TIMING) == "rps"
    assert check_metric("p99_latency_ms", Measure.TIMING) == "p99_latency_ms"
    assert check_metric("instructions.command_per_call", Measure.INSTRUCTIONS)
    with pytest.raises(UsageError, match="not measured with --measure timing"):
        check_metric("instructions.total_per_request", Measure.TIMING)
    with pytest.raises(UsageError, match=r"choose one of instructions\.total_per_request"):
        check_metric("rps", Measure.INSTRUCTIONS)


def test_marks_follow_the_direction_of_the_first_step() -> None:
    assert classify(Verdict.REGRESSION, Verdict.REGRESSION) is Mark.BAD
    assert classify(Verdict.IMPROVEMENT, Verdict.IMPROVEMENT) is Mark.BAD
    assert classify(Verdict.NO_CHANGE, Verdict.REGRESSION) is Mark.GOOD
    assert classify(Verdict.IMPROVEMENT, Verdict.REGRESSION) is Mark.GOOD
    assert classify(Verdict.INCONCLUSIVE, Verdict.REGRESSION) is None
    assert classify(Verdict.UNSTABLE, Verdict.REGRESSION) is None
    assert classify(Verdict.INSUFFICIENT_DATA, Verdict.REGRESSION) is Mark.SKIP


def test_more_runs_stay_within_the_budget() -> None:
    assert more_runs(2, 2, 6, None) == 2
    assert more_runs(2, 2, 6, 3) == 3
    assert more_runs(4, 2, 6, 9) == 2
    assert more_runs(6, 2, 6, 1) == 0


def test_a_timing_step_adds_at_most_runs_at_a_time() -> None:
    """Its level pays for a look after every added run (budget_rule): an estimate of 37
    more runs becomes 5 now and a look, not 35 at once."""
    assert more_runs(5, 5, 40, 37) == 35
    assert more_runs(5, 5, 40, 37, each_look=True) == 5
    assert more_runs(5, 5, 40, 3, each_look=True) == 3
    assert more_runs(38, 5, 40, 37, each_look=True) == 2


def _search(count: int, first_bad: int, broken: set[int] = frozenset()) -> list[int]:
    """The commits tested, in order, when ``first_bad`` is the answer."""
    marks: dict[int, Mark] = {}
    tested = []
    while (i := next_candidate(count, marks)) is not None:
        tested.append(i)
        marks[i] = Mark.SKIP if i in broken else Mark.BAD if i >= first_bad else Mark.GOOD
    return tested


def test_binary_search_finds_every_first_bad_commit_in_log2_steps() -> None:
    for count in range(2, 40):
        for first_bad in range(1, count):
            tested = _search(count, first_bad)
            marks = {i: Mark.BAD if i >= first_bad else Mark.GOOD for i in tested}
            assert outcome(count, marks).bad == first_bad and outcome(count, marks).found
            assert len(tested) + 1 <= max_steps(count - 1)


def test_the_fixture_layout_skips_the_broken_commit() -> None:
    # base, 3 neutral, broken (4), fix, slow (6), 2 neutral: 4 is the first midpoint
    assert _search(9, 6, {4}) == [4, 5, 6]
    found = outcome(9, {4: Mark.SKIP, 5: Mark.GOOD, 6: Mark.BAD})
    assert found.found and found.bad == 6 and found.skipped == ()


def test_only_skipped_commits_left_is_a_range() -> None:
    marks = {4: Mark.SKIP, 5: Mark.SKIP, 3: Mark.GOOD, 6: Mark.BAD}
    assert next_candidate(9, marks) is None
    found = outcome(9, marks)
    assert not found.found and (found.good, found.bad, found.skipped) == (3, 6, (4, 5))


def test_a_good_mark_above_the_first_bad_is_ignored() -> None:
    assert outcome(9, {3: Mark.BAD, 5: Mark.GOOD}) == outcome(9, {3: Mark.BAD})
    assert max_steps(8) == 4 and max_steps(1) == 1


def _row(command: str, run: int, total: float) -> dict[str, Any]:
    return {"status": "ok", "command": command, "pipeline": 16, "run": run,
            "instructions": {"total_per_request": total, "command_per_call": total / 3,
                             "function": "f", "top_functions": {"f": total / 3}}}


def test_effects_of_every_series_with_an_interval() -> None:
    a = [_row("SET", 1, 5000.0), _row("SET", 2, 5001.0), _row("GET", 1, 4000.0),
         _row("GET", 2, 4000.4)]
    b = [_row("SET", 1, 5100.0), _row("SET", 2, 5101.0), _row("GET", 1, 4000.2),
         _row("GET", 2, 4000.2)]
    found = {e.series: e for e in effects(a, b, Measure.INSTRUCTIONS,
                                         "instructions.total_per_request")}
    assert found["SET P=16"].verdict is Verdict.REGRESSION
    assert found["SET P=16"].low < found["SET P=16"].change < found["SET P=16"].high
    assert found["SET P=16"].change == pytest.approx(0.02, abs=1e-4)
    assert found["GET P=16"].verdict is Verdict.NO_CHANGE and found["GET P=16"].runs == 2
    single = effects(a[:1], b[:1], Measure.INSTRUCTIONS, "instructions.total_per_request")
    assert math.isnan(single[0].low)
