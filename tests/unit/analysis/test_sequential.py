"""`--runs auto`'s sequential rule (analysis/sequential.py): its looks, its stops, and its
false alarms under repeated looks held to the 1% of the fixed-n rule by simulation
(analysis/sequential_calibration.py; the full grid: benchmarks/sequential_calibration.py,
docs/PERFORMANCE.md "Sequential verdicts").

The A/A cell is the one nearest the target in the grid (paired, CV 10%, stalls: no series is
ever decided, so every look from 3 to 12 rounds is taken). 2,000 comparisons: a rule at 1%
flags more than 34 (1.7%) with chance < 0.1% (``binom.ppf(0.999, 2000, 0.01)``); testing
every look at the rule's own α (no correction) flags ~7% there and fails by far (the
second test shows it).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from kvperf.analysis.bisect import effects
from kvperf.analysis.calibration import Cell, rates, run
from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.sequential import (
    Design,
    SeriesStop,
    Stop,
    budget_rule,
    look,
    series_verdicts,
    should_stop,
    stops,
)
from kvperf.analysis.sequential_calibration import sequential
from kvperf.analysis.verdict import Verdict
from kvperf.core.kinds import Measure
from kvperf.results.row import Row

A_A = Cell(0, 0.10, 0.0, True, "heavy")
A_A_DRAWS = 2000
A_A_BOUND = int(binom.ppf(0.999, A_A_DRAWS, 0.01))  # 34 of 2,000


def test_repeated_looks_keep_false_alarms_within_one_percent() -> None:
    outcome = sequential(A_A, A_A_DRAWS, np.random.default_rng(3), Design())
    assert outcome.mean_rounds == 12.0  # nothing decided: every look was taken
    assert outcome.any_flag * A_A_DRAWS <= A_A_BOUND, outcome


def test_uncorrected_looks_are_what_the_correction_prevents() -> None:
    """The same cell with every look at α = 0.01 (γ = 0), 1,000 comparisons: above the
    99.9% bound of a rule at 1% (20 of 1,000)."""
    naive = sequential(A_A, 1000, np.random.default_rng(3), Design(exponent=0.0))
    assert naive.any_flag * 1000 > binom.ppf(0.999, 1000, 0.01), naive


def test_a_ten_percent_slowdown_is_decided_early() -> None:
    """10% at CV 1%, paired: decided a regression in every comparison, in fewer than 6
    rounds on average (fixed n detects it 52% at 3 pairs, 100% at 5)."""
    outcome = sequential(Cell(0, 0.01, 0.10, True, "normal"), 300, np.random.default_rng(4),
                         Design())
    assert outcome.detected == 1.0 and outcome.mean_rounds < 6, outcome
    fixed, _, _ = run(Cell(3, 0.01, 0.10, True, "normal"), 300, np.random.default_rng(4))
    assert rates(fixed).detected < 0.9


def test_the_nominal_level_divides_alpha_by_the_looks() -> None:
    design = Design(max_rounds=12)
    assert design.looks == 10 and design.nominal == pytest.approx(0.001)
    assert design.rule().alpha == pytest.approx(0.001)
    assert Design(max_rounds=3).nominal == pytest.approx(0.01)
    with pytest.raises(ValueError, match="min_rounds"):
        Design(max_rounds=2)


@pytest.mark.parametrize(("verdicts", "rounds", "stop"), [
    ([Verdict.REGRESSION, Verdict.NO_CHANGE], 3, True),
    ([Verdict.REGRESSION, Verdict.NO_CHANGE], 2, False),  # before the first look
    ([Verdict.REGRESSION, Verdict.INCONCLUSIVE], 5, False),
    ([Verdict.UNSTABLE], 11, False),
    ([Verdict.UNSTABLE], 12, True),  # max-runs
    ([], 4, False),
])
def test_a_comparison_stops_when_every_series_is_decided(verdicts: list[Verdict], rounds: int,
                                                         stop: bool) -> None:
    assert should_stop(verdicts, rounds, Design()) is stop


def test_each_series_says_why_it_stopped() -> None:
    found = stops([("SET", Verdict.REGRESSION), ("GET", Verdict.INCONCLUSIVE)], 12, Design())
    assert found == [SeriesStop("SET", Verdict.REGRESSION, 12, Stop.DECIDED),
                     SeriesStop("GET", Verdict.INCONCLUSIVE, 12, Stop.MAX_RUNS)]
    assert found[0].text() == "decided: regression after 12 rounds"
    assert found[1].text() == "max-runs reached: inconclusive after 12 rounds"


def _rows(command: str, rps: list[float]) -> list[Row]:
    return [Row(command=command, data_size=3, pipeline=16, clients=10, run=k + 1, rps=v,
                status="ok", trial_id=command) for k, v in enumerate(rps)]


def test_a_look_judges_each_series_by_its_rps() -> None:
    a = _rows("SET", [100.0, 101, 99, 100]) + _rows("GET", [100.0, 101, 99, 100])
    b = _rows("SET", [80.0, 80.5, 79.5, 80]) + _rows("GET", [100.1, 101, 99, 100.1])
    verdicts = dict(series_verdicts(compare_paired(a, b, "all", Design().rule())))
    assert verdicts == {"SET d=3 P=16 c=10": Verdict.REGRESSION,
                        "GET d=3 P=16 c=10": Verdict.NO_CHANGE}
    assert look(a, b, 4, Design()) is True
    assert look(a, b, 2, Design()) is False
    noisy = _rows("GET", [100.0, 130, 80, 100])
    assert look(a, _rows("SET", [80.0, 80.5, 79.5, 80]) + noisy, 4, Design()) is False


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
