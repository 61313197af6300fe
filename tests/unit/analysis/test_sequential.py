"""`--runs auto`'s sequential rule (analysis/sequential.py): its looks, its stops, and its
false alarms under repeated looks held to the 1% of the fixed-n rule by simulation
(analysis/sequential_calibration.py; the full grid: benchmarks/sequential_calibration.py,
docs/PERFORMANCE.md "Sequential verdicts").

The A/A cell is the one nearest the target in the grid (paired, CV 10%, normal: a series is
hardly ever decided, so nearly every look from 3 to 12 rounds is taken). 2,000 comparisons: a
rule at 1% flags more than 34 (1.7%) with chance < 0.1% (``binom.ppf(0.999, 2000, 0.01)``);
testing every look at the rule's own α (no correction) flags several times more there and
fails (the second test shows it).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from scipy.stats import binom

from kvperf.analysis.bisect import effects
from kvperf.analysis.calibration import Cell, rates, run
from kvperf.analysis.comparison import compare_paired, describe_group
from kvperf.analysis.sequential import (
    POCOCK,
    SPENT,
    Design,
    Looks,
    SeriesStop,
    Stop,
    budget_rule,
    recorded_stops,
    replay,
    series_verdicts,
    shape,
)
from kvperf.analysis.sequential_calibration import sequential
from kvperf.analysis.verdict import Verdict
from kvperf.core.kinds import Measure
from kvperf.results.row import AutoStop, Row

A_A = Cell(0, 0.10, 0.0, True, "normal")
A_A_DRAWS = 2000
A_A_BOUND = int(binom.ppf(0.999, A_A_DRAWS, 0.01))  # 34 of 2,000
SET_AT_THE_EDGE = [90.0, 90.4, 89.76]  # B's SET rps: p between the 12th look's level and the 1st's


def test_repeated_looks_keep_false_alarms_within_one_percent() -> None:
    outcome = sequential(A_A, A_A_DRAWS, np.random.default_rng(3), Design())
    assert Design().calibrated, "the default design uses the calibrated level"
    assert outcome.any_flag * A_A_DRAWS <= A_A_BOUND, outcome


def test_uncorrected_looks_are_what_the_calibration_prevents() -> None:
    """The same cell with every look at α = 0.01, 1,000 comparisons: above the 99.9%
    bound of a rule at 1% (20 of 1,000)."""
    naive = sequential(A_A, 1000, np.random.default_rng(3), Design(level=0.01))
    assert naive.any_flag * 1000 > binom.ppf(0.999, 1000, 0.01), naive


def test_a_ten_percent_slowdown_is_decided_sooner_than_the_fixed_runs_that_detect_it() -> None:
    """10% at CV 2%, paired: the slowed series stops as a regression in every comparison,
    in fewer rounds on average than the fixed n that detects it in 90% (5: 4 pairs detect
    it in < 90%)."""
    outcome = sequential(Cell(0, 0.02, 0.10, True, "normal"), 300, np.random.default_rng(4),
                         Design())
    assert outcome.detected == 1.0 and outcome.mean_rounds < 5, outcome
    fixed, _, _ = run(Cell(4, 0.02, 0.10, True, "normal"), 300, np.random.default_rng(4))
    assert rates(fixed).detected < 0.9


def test_spent_levels_decide_a_slowdown_on_a_quiet_machine_sooner_than_one_level() -> None:
    """10% at CV 1%, paired (a quiet machine: the paired noise a fraction of the slowdown,
    where fixed --runs 4 detects it in ≥ 90%): on the same draws, the spent levels stop
    the slowed series as a regression sooner on average than the constant level before
    them (POCOCK[12] at every look), and in fewer than 4 rounds."""
    cell = Cell(0, 0.01, 0.10, True, "normal")
    spent = sequential(cell, 600, np.random.default_rng(5), Design(spent=True))
    constant = sequential(cell, 600, np.random.default_rng(5), Design())
    assert spent.detected == 1.0 and spent.mean_rounds < constant.mean_rounds - 0.05, \
        (spent, constant)
    assert spent.mean_rounds < 4, spent


def test_the_looks_spend_more_of_alpha_early_each_four_fifths_of_the_one_before() -> None:
    """Looks after rounds 3…12: shares 0.8^j / Σ 0.8^i, the first 0.2 / (1 − 0.8^10) =
    0.22406, the last 0.8^9 of it = 0.03007; they sum to 1."""
    shares = shape(3, 12)
    assert len(shares) == 10 and sum(shares) == pytest.approx(1.0)
    assert shares[0] == pytest.approx(0.22406, abs=1e-5)
    assert shares[-1] == pytest.approx(0.03007, abs=1e-5)
    assert all(b == pytest.approx(0.8 * a) for a, b in pairwise(shares)), shares
    assert shape(3, 3) == (1.0,)


def test_the_default_looks_test_at_the_constant_level_the_spent_ones_lost_at_cv_10() -> None:
    """The spent levels decide a 10% slowdown at CV 1–3% a little sooner but detect it at
    CV 10% in 56% against the constant level's 79% (docs/PERFORMANCE.md "Sequential
    verdicts"): the default keeps the constant level at every look."""
    assert Design().kind == "pocock" and set(Design().levels.values()) == {POCOCK[12]}
    assert Design().share is None


def test_each_look_tests_at_its_spent_level_falling_from_the_first() -> None:
    design = Design(max_rounds=12, spent=True)
    assert design.kind == "spent" and design.calibrated and design.looks == 10
    levels = design.levels
    assert list(levels) == list(range(3, 13))
    assert levels[3] == pytest.approx(SPENT[12] * shape(3, 12)[0])
    assert all(a > b for a, b in pairwise(levels.values())), levels
    assert levels[3] > POCOCK[12] > levels[12]  # more than the constant level early, less late
    assert sum(levels.values()) >= 0.01 - 1e-12  # at least Bonferroni's budget
    assert design.rule(4).alpha == levels[4]
    assert design.level_at(2) == levels[3] and design.level_at(15) == levels[12]


def test_a_max_runs_not_calibrated_keeps_the_constant_level_else_alpha_over_the_looks() -> None:
    assert 11 not in SPENT and Design(max_rounds=11).kind == "pocock"
    assert set(Design(max_rounds=11).levels.values()) == {POCOCK[11]}
    assert not Design(max_rounds=999).calibrated
    assert Design(max_rounds=999).level_at(5) == pytest.approx(0.01 / 997)
    assert Design(max_rounds=12, min_rounds=4).level_at(4) == pytest.approx(0.01 / 9)
    assert Design(level=0.004).level_at(3) == 0.004 == Design(level=0.004).level_at(12)
    with pytest.raises(ValueError, match="min_rounds"):
        Design(max_rounds=2)


def test_the_tables_hold_the_default_and_never_go_below_bonferroni() -> None:
    assert {3, 12} <= set(SPENT) and {3, 4, 12} <= set(POCOCK)
    for n, c in SPENT.items():  # between the levels summing to α and the first at α
        assert 0.01 <= c <= 0.01 / shape(3, n)[0] + 1e-12, (n, c)
        assert Design(max_rounds=n, spent=True).kind == "spent"
    assert all(0.01 / Design(max_rounds=n).looks <= level <= 0.01 for n, level in
               POCOCK.items())


@pytest.mark.parametrize(("verdicts", "rounds", "stop"), [
    ([Verdict.REGRESSION, Verdict.NO_CHANGE], 3, True),
    ([Verdict.REGRESSION, Verdict.NO_CHANGE], 2, False),  # before the first look
    ([Verdict.REGRESSION, Verdict.INCONCLUSIVE], 5, False),
    ([Verdict.UNSTABLE], 11, False),
    ([Verdict.UNSTABLE], 12, True),  # max-runs
    ([], 4, False),
])
def test_a_comparison_stops_when_every_series_has(verdicts: list[Verdict], rounds: int,
                                                  stop: bool) -> None:
    series = [(f"S{k}", v) for k, v in enumerate(verdicts)]
    assert Looks(Design()).after(series, rounds) is stop


def test_each_series_stops_on_its_own_and_keeps_its_verdict() -> None:
    looks = Looks(Design())
    assert not looks.after([("SET", Verdict.REGRESSION), ("GET", Verdict.INCONCLUSIVE)], 4)
    assert not looks.open("SET") and looks.open("GET")
    assert not looks.after([("SET", Verdict.INCONCLUSIVE), ("GET", Verdict.UNSTABLE)], 7)
    assert looks.after([("SET", Verdict.NO_CHANGE), ("GET", Verdict.NO_CHANGE)], 8)
    found = looks.stops([("SET", Verdict.NO_CHANGE), ("GET", Verdict.NO_CHANGE)], 8)
    assert found == [SeriesStop("SET", Verdict.REGRESSION, 4, Stop.DECIDED),
                     SeriesStop("GET", Verdict.NO_CHANGE, 8, Stop.DECIDED)]
    assert found[0].text() == "decided: regression after 4 rounds"
    assert found[0].record() == {"rounds": 4, "stop": "decided", "verdict": "regression"}


def test_each_series_says_why_it_stopped() -> None:
    looks = Looks(Design())
    looks.after([("SET", Verdict.REGRESSION), ("GET", Verdict.INCONCLUSIVE)], 12)
    found = looks.stops([("SET", Verdict.REGRESSION), ("GET", Verdict.INCONCLUSIVE)], 12)
    assert found == [SeriesStop("SET", Verdict.REGRESSION, 12, Stop.DECIDED),
                     SeriesStop("GET", Verdict.INCONCLUSIVE, 12, Stop.MAX_RUNS)]
    assert found[1].text() == "max-runs reached: inconclusive after 12 rounds"


def _rows(command: str, rps: list[float]) -> list[Row]:
    return [Row(command=command, data_size=3, pipeline=16, clients=10, run=k + 1, rps=v,
                status="ok", trial_id=command) for k, v in enumerate(rps)]


def test_a_look_judges_each_series_by_its_rps() -> None:
    a = _rows("SET", [100.0, 101, 99, 100]) + _rows("GET", [100.0, 101, 99, 100])
    b = _rows("SET", [80.0, 80.5, 79.5, 80]) + _rows("GET", [100.1, 101, 99, 100.1])
    verdicts = dict(series_verdicts(compare_paired(a, b, "all", Design().rule(4))))
    assert verdicts == {"SET d=3 P=16 c=10": Verdict.REGRESSION,
                        "GET d=3 P=16 c=10": Verdict.NO_CHANGE}
    assert Looks(Design()).look(a, b, 4) is True
    assert Looks(Design()).look(a, b, 2) is False
    noisy = _rows("GET", [100.0, 130, 80, 100])
    looks = Looks(Design())
    assert looks.look(a, _rows("SET", [80.0, 80.5, 79.5, 80]) + noisy, 4) is False
    assert not looks.open("SET d=3 P=16 c=10") and looks.open("GET d=3 P=16 c=10")


def test_a_stopped_series_is_judged_on_its_rounds_up_to_its_stop() -> None:
    looks = Looks(Design())
    looks.after([("SET d=3 P=16 c=10", Verdict.REGRESSION)], 4)
    rows = _rows("SET", [100.0] * 6) + _rows("GET", [100.0] * 6)
    kept = looks.kept(rows)
    assert sorted(r["run"] for r in kept if r["command"] == "SET") == [1, 2, 3, 4]
    assert sorted(r["run"] for r in kept if r["command"] == "GET") == [1, 2, 3, 4, 5, 6]


def test_replay_stops_each_series_where_a_run_would_have() -> None:
    """Fixed-round rows judged as if they had run auto: SET (20% slower, tight) stops as a
    regression at the first look, GET (noisy) runs to the last round it has."""
    a = _rows("SET", [100.0, 101, 99, 100, 100, 101]) + _rows("GET", [100.0] * 6)
    b = _rows("SET", [80.0, 80.5, 79.5, 80, 80.2, 80.1]) + \
        _rows("GET", [100.0, 130, 80, 100, 125, 85])
    stopped = replay(a, b, Design()).stopped
    assert stopped["SET d=3 P=16 c=10"] == SeriesStop("SET d=3 P=16 c=10",
                                                      Verdict.REGRESSION, 3, Stop.DECIDED)
    assert "GET d=3 P=16 c=10" not in stopped  # 6 rounds stored, undecided, below max-runs


def test_the_table_shows_each_series_as_the_look_that_stopped_it() -> None:
    """SET (10% slower, 3 rounds) stops as a regression at the first look, at its spent
    level; GET (noisy, 12 rounds) runs to the last. The final table holds SET as that look
    judged it — its reason names the first look's level — not as the 12th look's lower
    level would judge the same rows (inconclusive): the stop line and the table agree."""
    a = _rows("SET", [100.0, 100, 100]) + _rows("GET", [100.0] * 12)
    b = _rows("SET", SET_AT_THE_EDGE) + _rows("GET", [100.0 + 9 * (-1) ** k for k in range(12)])
    design, put = Design(spent=True), "SET d=3 P=16 c=10"
    looks = replay(a, b, design)
    assert looks.stopped[put] == SeriesStop(put, Verdict.REGRESSION, 3, Stop.DECIDED)
    assert looks.stopped["GET d=3 P=16 c=10"].rounds == 12
    table = {(describe_group(c.group), c.metric): c.decision for c in looks.final(a, b)}
    assert table[put, "rps"].verdict is Verdict.REGRESSION, table
    assert f"≤ {design.level_at(3):g}" in table[put, "rps"].reason, table
    assert table["GET d=3 P=16 c=10", "rps"].verdict not in (Verdict.REGRESSION,
                                                              Verdict.IMPROVEMENT)
    late = compare_paired(looks.kept(a), looks.kept(b), "all", design.rule(12))
    assert dict(series_verdicts(late))[put] is Verdict.INCONCLUSIVE


def test_rows_carry_their_series_stop() -> None:
    rows = _rows("SET", [100.0, 101])
    for row in rows:
        row["auto"] = AutoStop(rounds=4, stop="decided", verdict="regression")
    bad = _rows("GET", [100.0])
    bad[0]["auto"] = AutoStop(rounds=2, stop="stopped?", verdict="regression")
    assert recorded_stops(rows + bad + _rows("HSET", [1.0])) == [
        SeriesStop("SET d=3 P=16 c=10", Verdict.REGRESSION, 4, Stop.DECIDED)]


def test_a_bisect_step_is_judged_at_alpha_over_the_looks_its_budget_allows() -> None:
    """bisect's steps look after --runs and again as runs are added up to --max-runs: the
    same correction (5 and 15: 11 looks). A step at p 0.0026 is a regression at a single
    look, and needs more runs when it may look 11 times."""
    assert budget_rule(5, 15).alpha == pytest.approx(0.01 / 11)
    assert budget_rule(5, 5).alpha == pytest.approx(0.01)
    a, b = _rows("SET", [100.0] * 5), _rows("SET", [95.0, 91, 96, 92, 94])
    once = effects(a, b, Measure.TIMING, "rps")
    assert [e.verdict for e in once] == [Verdict.REGRESSION]
    looked = effects(a, b, Measure.TIMING, "rps", rule=budget_rule(5, 15))
    assert [e.verdict for e in looked] == [Verdict.INCONCLUSIVE], looked



def test_a_bisect_step_s_margin_is_bisect_s_min_effect_when_given() -> None:
    """bisect --min-effect PCT in timing: a step ~3% slower, tightly, is a regression at rps's
    own 2% and no change within ±6%; a neutral step too noisy to prove within ±2% (8 runs)
    is proven within ±10%."""
    a, b = _rows("SET", [100.0] * 8), _rows("SET", [97.0, 96.9, 97.1, 97.0, 96.8, 97.2, 97, 97])
    assert [e.verdict for e in effects(a, b, Measure.TIMING, "rps")] == [Verdict.REGRESSION]
    wide = effects(a, b, Measure.TIMING, "rps", 0.06)
    assert [e.verdict for e in wide] == [Verdict.NO_CHANGE], wide
    noisy = _rows("SET", [103.0, 97, 102, 98, 104, 96, 101, 99])
    assert [e.verdict for e in effects(a, noisy, Measure.TIMING, "rps")] == [
        Verdict.INCONCLUSIVE]
    assert [e.verdict for e in effects(a, noisy, Measure.TIMING, "rps", 0.10)] == [
        Verdict.NO_CHANGE]

LATENCIES = ("avg_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
             "max_latency_ms")


def _rows_with_latency(command: str, rps: list[float], latency: list[float]) -> list[Row]:
    return [Row(command=command, data_size=3, pipeline=16, clients=10, run=k + 1, rps=v,
                status="ok", trial_id=command, **dict.fromkeys(LATENCIES, ms))
            for k, (v, ms) in enumerate(zip(rps, latency, strict=True))]


def test_a_look_decides_a_series_on_its_rps_in_the_family_of_the_open_series_rps() -> None:
    """SET 10% slower over 4 rounds (raw p 0.0024) beside five unchanged, noisy latency
    rows: the full two-stage correction over its 6 rows and the 2 series lifts its p to
    0.029 (inconclusive at 0.01), so the look without the primary family leaves it open;
    tested among the open series' rps only (BH over 2: 0.0049) it is a regression, the look
    stops it, and the table shows that verdict."""
    a = _rows_with_latency("SET", [100.0] * 4, [1.0, 1.2, 0.9, 1.1]) + \
        _rows_with_latency("GET", [100.0] * 4, [1.0] * 4)
    b = _rows_with_latency("SET", [90.0, 87, 92, 89], [1.1, 1.0, 1.1, 1.0]) + \
        _rows_with_latency("GET", [100.0, 101, 99, 100], [1.0] * 4)
    put = "SET d=3 P=16 c=10"
    full = Looks(Design(level=0.01))
    assert full.look(a, b, 4) is False and full.open(put)
    looks = Looks(Design(level=0.01, share=1.0))
    assert looks.look(a, b, 4) is True
    assert looks.stopped[put] == SeriesStop(put, Verdict.REGRESSION, 4, Stop.DECIDED)
    assert looks.alarms == [f"{put} rps: regression at round 4"]
    table = {(describe_group(c.group), c.metric): c for c in looks.final(a, b)}
    assert table[put, "rps"].decision.verdict is Verdict.REGRESSION
    assert table[put, "rps"].p_adjusted == pytest.approx(2 * table[put, "rps"].p)
    assert table[put, "p99_latency_ms"].decision.verdict is Verdict.UNSTABLE
