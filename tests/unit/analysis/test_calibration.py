"""The verdict rule held to its documented targets (docs/PERFORMANCE.md "Verdicts: false
alarms and power"; the full grid: benchmarks/verdict_calibration.py), on every CI run.

Every rate is a binomial proportion over N simulated comparisons (fixed seeds). A threshold is
the documented target widened by Monte-Carlo error only: the one-sided 99.9% binomial bound of
a rule sitting exactly on the target (``binom.ppf``), so a rule that meets the target fails for
fewer than 1 seed in 1,000. N is the smallest (in steps of 100) for which that bound and the
99.9% bound of a rule twice as bad (false alarms doubled, or misses doubled) do not overlap
(``_draws``; ``test_each_n_separates_the_target_from_twice_as_bad`` checks it):

- A/A, target ≤ 1% flagged per cell: N = 5,600; fail above 80 flagged (1.43%). A rule at 2%
  flags ≥ 81 with 99.9% probability. The rule measures 0.95–1.02% in these cells.
- 10% at CV 1%, n = 3, target ≥ 90% detected: N = 500; fail below 428 (85.6%); a rule at
  80% (misses doubled) detects ≤ 427. Measured 99.5% / 99.5% / 93.9% (normal / log-normal /
  heavy, 40,000 comparisons each).
- effect ≥ 5× CV, n ≥ 5, target ≥ 95%: N = 1,100; fail below 1,021 (92.8%); a rule at 90%
  detects ≤ 1,020. Measured 99.6% (unpaired normal), 97.7% (paired log-normal).
- "needs ~N more runs", aim ≥ 90% concluding: N = 500 checked; fail below 428. Measured
  95.1% (1,000); asking for half the runs the rule computes concludes 77%.

The known miss of the 95% target — paired, heavy-tailed noise, n = 5, 5% at CV 1%: 94.3%
(200,000 comparisons: 94.28%), the stalls explained in docs/PERFORMANCE.md — has its own test:
inside its measured band and below the target.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from kvperf.analysis.calibration import Cell, check_runs_needed, rates, run, simulate

LEVEL = 0.001  # each bound is one-sided 99.9%

A_A_TARGET = 0.01  # at most, per cell
TEN_PERCENT_TARGET = 0.90  # at least: 10% at CV 1%, n = 3 per side
FIVE_CVS_TARGET = 0.95  # at least: effect ≥ 5× CV, n ≥ 5 per side
RUNS_NEEDED_AIM = 0.90  # at least: concluded after the runs asked for

KNOWN_MISS = Cell(5, 0.01, 0.05, True, "heavy")
KNOWN_MISS_MEASURED = 0.943  # docs/PERFORMANCE.md's targets table (200,000: 94.28%)
KNOWN_MISS_DRAWS = 10_000  # P(≥ 95% observed | 94.28%) = 0.09%: "below target" is decided

# The A/A cells closest to the target in the full grid (CV 10%: 0.95–1.02% flagged): both
# designs, all three noises; a rule that doubles false alarms shows here first.
A_A_CELLS = [Cell(3, 0.10, 0.0, False, "normal"), Cell(3, 0.10, 0.0, True, "lognormal"),
             Cell(5, 0.10, 0.0, False, "heavy")]


def _draws(target: float, worse: float) -> int:
    """Smallest N (steps of 100) whose one-sided 99.9% bounds around ``target`` and around
    ``worse`` do not overlap."""
    for n in range(100, 100_000, 100):
        if worse > target and binom.ppf(1 - LEVEL, n, target) < binom.ppf(LEVEL, n, worse):
            return n
        if worse < target and binom.ppf(LEVEL, n, target) > binom.ppf(1 - LEVEL, n, worse):
            return n
    raise AssertionError((target, worse))


def _at_least(target: float, n: int) -> float:
    """The fewest successes of n a rule exactly at ``target`` reaches (99.9%), as a share."""
    return float(binom.ppf(LEVEL, n, target)) / n


def _at_most(target: float, n: int) -> float:
    return float(binom.ppf(1 - LEVEL, n, target)) / n


def _misses_doubled(target: float) -> float:
    return 1 - 2 * (1 - target)


A_A_DRAWS = _draws(A_A_TARGET, 2 * A_A_TARGET)
TEN_PERCENT_DRAWS = _draws(TEN_PERCENT_TARGET, _misses_doubled(TEN_PERCENT_TARGET))
FIVE_CVS_DRAWS = _draws(FIVE_CVS_TARGET, _misses_doubled(FIVE_CVS_TARGET))
RUNS_NEEDED_DRAWS = _draws(RUNS_NEEDED_AIM, _misses_doubled(RUNS_NEEDED_AIM))


def test_each_n_separates_the_target_from_twice_as_bad() -> None:
    """The docstring's arithmetic, and that the thresholds sit between target and double."""
    assert (A_A_DRAWS, TEN_PERCENT_DRAWS, FIVE_CVS_DRAWS, RUNS_NEEDED_DRAWS) == \
        (5600, 500, 1100, 500)
    assert A_A_TARGET < _at_most(A_A_TARGET, A_A_DRAWS) < 2 * A_A_TARGET
    assert binom.ppf(1 - LEVEL, A_A_DRAWS, A_A_TARGET) == 80
    assert binom.ppf(LEVEL, A_A_DRAWS, 2 * A_A_TARGET) == 81
    assert binom.ppf(LEVEL, TEN_PERCENT_DRAWS, TEN_PERCENT_TARGET) == 428
    assert binom.ppf(LEVEL, FIVE_CVS_DRAWS, FIVE_CVS_TARGET) == 1021
    assert binom.sf(0.95 * KNOWN_MISS_DRAWS - 1, KNOWN_MISS_DRAWS, 0.9428) < LEVEL


@pytest.mark.parametrize("cell", A_A_CELLS, ids=str)
def test_a_a_false_alarms_meet_the_target(cell: Cell) -> None:
    """At most 1% of A/A comparisons with any of the 28 rows flagged (5,600: ≤ 80)."""
    judged = run(cell, A_A_DRAWS, np.random.default_rng(1))[0]
    flagged = rates(judged).any_flag
    assert flagged <= _at_most(A_A_TARGET, A_A_DRAWS), (cell, flagged)


@pytest.mark.parametrize("noise", ["normal", "lognormal", "heavy"])
def test_ten_percent_at_one_percent_cv_with_three_runs_is_detected(noise: str) -> None:
    """≥ 90% detected (500: ≥ 428); no inconclusive row whose adjusted interval clears the
    minimum effect; wrong flags (the unchanged series, or an improvement) within the A/A
    target's bound."""
    r = rates(run(Cell(3, 0.01, 0.10, False, noise), TEN_PERCENT_DRAWS,
                  np.random.default_rng(2))[0])
    assert r.detected >= _at_least(TEN_PERCENT_TARGET, TEN_PERCENT_DRAWS), r
    assert r.not_straddling == 0.0, r
    assert r.wrong <= _at_most(A_A_TARGET, TEN_PERCENT_DRAWS), r


@pytest.mark.parametrize("cell", [Cell(5, 0.01, 0.05, False, "normal"),
                                  Cell(5, 0.01, 0.05, True, "lognormal")], ids=str)
def test_five_cvs_with_five_runs_is_detected(cell: Cell) -> None:
    """≥ 95% detected (1,100: ≥ 1,021), unpaired and paired, at exactly 5× the CV."""
    r = rates(run(cell, FIVE_CVS_DRAWS, np.random.default_rng(3))[0])
    assert r.detected >= _at_least(FIVE_CVS_TARGET, FIVE_CVS_DRAWS), (cell, r)


def test_known_miss_paired_heavy_tails_with_five_rounds() -> None:
    """The documented miss of the 95% target (docs/PERFORMANCE.md, after the targets table:
    a stall in one of series 0's 10 runs — 1 comparison in 10 — drops its round, and the 4
    rounds left detect ~65%). Held where it was measured: inside the two-sided 99.9% band of
    94.3% at 10,000 comparisons (93.5–95.05%), and below the target. If the rule improves
    beyond the band, this fails: update the docs and this test."""
    detected = rates(run(KNOWN_MISS, KNOWN_MISS_DRAWS, np.random.default_rng(6))[0]).detected
    low = binom.ppf(LEVEL / 2, KNOWN_MISS_DRAWS, KNOWN_MISS_MEASURED) / KNOWN_MISS_DRAWS
    high = binom.ppf(1 - LEVEL / 2, KNOWN_MISS_DRAWS, KNOWN_MISS_MEASURED) / KNOWN_MISS_DRAWS
    assert low <= detected <= high, (low, detected, high)
    assert detected < FIVE_CVS_TARGET, detected


def test_runs_needed_settles_the_comparison() -> None:
    """Of 500 inconclusive comparisons (5% at CV 2%, 3 pairs) given the runs "needs ~N
    more runs" asked for, ≥ 90% conclude (≥ 428). The aim is for effects clear of the
    minimum effect; at the minimum effect (2%) it is not met: 51% overall, the docs say so."""
    check = check_runs_needed(Cell(3, 0.02, 0.05, True, "lognormal"), RUNS_NEEDED_DRAWS,
                              np.random.default_rng(4))
    assert check.checked == RUNS_NEEDED_DRAWS, check
    assert check.concluded >= binom.ppf(LEVEL, check.checked, RUNS_NEEDED_AIM), check


def test_the_simulated_metrics_correlate_as_measured_ones() -> None:
    """avg latency ≈ 1/rps (correlation ≈ −1), max latency hardly follows it."""
    la, _ = simulate(Cell(20, 0.02, 0.0, False, "lognormal"), 200, np.random.default_rng(5))
    runs = la[:, :14].transpose(0, 2, 1).reshape(-1, 14)
    corr = np.corrcoef(runs, rowvar=False)
    assert corr[0, 1] < -0.99 and abs(corr[0, 7]) < 0.3
