"""Tests for kvperf.analysis.verdict: the rule, one clause at a time, on hand-made data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvperf.analysis.verdict import (
    DEFAULT_RULE,
    VERDICTS,
    MinEffect,
    Rows,
    Rule,
    Verdict,
    decision,
    judge,
    lower_is_better,
    median_unbiased_sd,
    min_effect_for,
)


def test_verdict_wording() -> None:
    assert [v.value for v in Verdict] == [
        "regression", "improvement", "no change", "inconclusive", "unstable",
        "insufficient data", "not comparable"]
    assert f"{Verdict.NO_CHANGE}" == "no change"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("rps", 0.02), ("latency_p99", 0.05), ("p50_LATENCY_ms", 0.05), ("cpu_user", 0.02)],
)
def test_min_effect_for(name: str, expected: float) -> None:
    assert min_effect_for(name) == expected


def test_min_effect_for_custom_defaults() -> None:
    custom = MinEffect(throughput=0.01, latency=0.1)
    assert min_effect_for("rps", custom) == 0.01
    assert min_effect_for("latency_p50", custom) == 0.1


@pytest.mark.parametrize(
    ("name", "expected"),
    [("rps", False), ("ops_per_sec", False), ("latency_p50", True), ("cpu_percent", True),
     ("instructions", True), ("usec_per_call", True), ("bytes_per_request", True),
     ("Latency_P99", True)],
)
def test_lower_is_better(name: str, expected: bool) -> None:
    assert lower_is_better(name) is expected


def _one(a: list[float], b: list[float], metric: str = "rps", paired: bool = False,
         rule: Rule = DEFAULT_RULE) -> tuple[Verdict, str, int | None, bool]:
    """Judge one row given raw values; returns (verdict, reason, runs needed, statistics)."""
    rows = Rows.of([metric])
    width = max(len(a), len(b))
    la = np.log(np.array([a + [math.nan] * (width - len(a))]))
    lb = np.log(np.array([b + [math.nan] * (width - len(b))]))
    d = decision(judge(la, lb, paired, rows, rule), 0, rows, rule)
    return d.verdict, d.reason, d.runs_needed, d.statistics


# --- rule 1: no values, one value ------------------------------------------------------


def test_a_side_without_values_is_insufficient_data() -> None:
    verdict, reason, _, _ = _one([], [100.0])
    assert verdict is Verdict.INSUFFICIENT_DATA and reason == "no runs on one side"


@pytest.mark.parametrize(("new", "metric", "expected"), [
    (82.0, "rps", Verdict.REGRESSION),          # -18% throughput
    (106.0, "rps", Verdict.IMPROVEMENT),        # +6%
    (104.9, "rps", Verdict.NO_CHANGE),          # inside the ±5% water line
    (106.0, "p99_latency_ms", Verdict.REGRESSION),  # latency up
])
def test_single_sample_against_the_water_line(new: float, metric: str,
                                              expected: Verdict) -> None:
    verdict, reason, needed, statistics = _one([100.0], [new], metric)
    assert verdict is expected and not statistics and needed is None
    assert reason.startswith("single sample, no statistics: ")
    assert "±5% water line" in reason


def test_water_line_is_a_parameter_and_one_value_on_one_side_is_enough() -> None:
    assert _one([100.0], [97.0], rule=Rule(water_line=0.02))[0] is Verdict.REGRESSION
    assert _one([100.0, 101.0, 99.0], [82.0])[0] is Verdict.REGRESSION  # 1 value on B


# --- rule 2: unstable --------------------------------------------------------------------


def test_a_side_noisier_than_10_percent_is_unstable() -> None:
    verdict, reason, _, _ = _one([100.0, 125.0, 80.0], [60.0, 61.0, 60.5])
    assert verdict is Verdict.UNSTABLE
    assert reason.startswith("run-to-run CV ") and reason.endswith("exceeds 10.0%")


def test_paired_rounds_are_as_noisy_as_their_ratios() -> None:
    """±25% drift shared by both sides of a round cancels in the ratio: not unstable."""
    speed = [1.0, 1.25, 0.8, 1.1, 0.9, 1.2]
    a = [100.0 * s for s in speed]
    b = [85.0 * s * j for s, j in zip(speed, [1.0, 1.01, 0.99, 1.005, 0.995, 1.0],
                                      strict=True)]
    assert _one(a, b, paired=True)[0] is Verdict.REGRESSION
    verdict, reason, _, _ = _one(a, b)  # the same values as independent samples
    assert verdict is Verdict.UNSTABLE and reason.startswith("run-to-run CV")


# --- rule 3: significant and beyond the minimum effect ------------------------------------


@pytest.mark.parametrize(("factor", "metric", "expected"), [
    (1.10, "p99_latency_ms", Verdict.REGRESSION), (0.90, "p99_latency_ms", Verdict.IMPROVEMENT),
    (1.10, "rps", Verdict.IMPROVEMENT), (0.90, "rps", Verdict.REGRESSION),
])
def test_direction(factor: float, metric: str, expected: Verdict) -> None:
    a = [100.0, 101.0, 99.0]
    verdict, reason, _, _ = _one(a, [v * factor for v in a], metric)
    assert verdict is expected
    assert reason.startswith(f"B/A {factor - 1:+.1%}, p (adj.) ") and reason.endswith("≤ 0.01")


def test_the_issues_example_is_a_regression() -> None:
    """6 runs per side, SET rps 100,189 (CV 0.8%) vs 89,563 (CV 1.1%): the Mann–Whitney
    floor (p ≥ 0.0022) made this 'inconclusive'; the t-test on logs gives p ~ 1e-8."""
    rng = np.random.default_rng(17)
    a = list(100_189 * (1 + 0.008 * rng.standard_normal(6)))
    b = list(89_563 * (1 + 0.011 * rng.standard_normal(6)))
    assert _one(a, b)[0] is Verdict.REGRESSION


def test_a_significant_change_inside_the_minimum_effect_is_no_change() -> None:
    a = [100.0, 100.1, 99.9, 100.05, 99.95]
    verdict, reason, _, _ = _one(a, [v * 1.01 for v in a])  # +1%, p tiny, band ±2%
    assert verdict is Verdict.NO_CHANGE and reason.startswith("95% CI [1.00")


def test_ranks_that_disagree_downgrade_a_flag_to_unstable() -> None:
    """Six rounds +5%, four rounds a hair below 0: t = 3.6 (p = 0.006), the ratio +3% is
    beyond 2%, but the signed ranks put the four smallest on the minus side: W+ = 45 of 55,
    P(W+ ≥ 45) = P(W+ ≤ 10) = 43/1024 (the partitions of 0…10 into distinct parts), two-sided
    0.084 > 0.05."""
    lr = [0.05, 0.0501, 0.0502, 0.0503, 0.0504, 0.0505, -0.001, -0.002, -0.003, -0.004]
    verdict, reason, _, _ = _one([100.0] * 10, [100.0 * math.exp(x) for x in lr], paired=True)
    assert verdict is Verdict.UNSTABLE and reason == "the rank test disagrees with the t-test"


# --- rules 4 and 5: no change, inconclusive ----------------------------------------------


def test_a_tight_interval_inside_the_band_is_no_change() -> None:
    a = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0]
    verdict, reason, _, _ = _one(a, [100.2, 100.8, 99.3, 100.1, 99.9, 100.4])
    assert verdict is Verdict.NO_CHANGE and reason.endswith("within ±2.0%")


def test_inconclusive_says_how_many_more_runs() -> None:
    verdict, reason, needed, _ = _one([100.0, 103.0, 97.0], [96.0, 99.0, 93.0])
    assert verdict is Verdict.INCONCLUSIVE
    assert needed is not None and needed >= 1 and reason == f"needs ~{needed} more runs"


def test_decision_indexes_batches() -> None:
    """The same row judged alone and inside a batch of comparisons gets the same verdict."""
    rows = Rows.of(["rps"])
    la = np.log(np.array([[[100.0, 100.5, 99.5]], [[100.0, 100.5, 99.5]]]))
    lb = la + np.log(np.array([[[0.9]], [[1.0]]]))
    j = judge(la, lb, False, rows)
    assert decision(j, (0, 0), rows).verdict is Verdict.REGRESSION
    assert VERDICTS[int(j.verdict[1, 0])] is Verdict.NO_CHANGE


def test_outlier_runs_of_the_series_are_dropped_and_said() -> None:
    """One stalled run (rps ÷ 3) in 6: dropped from every metric of the series."""
    rows = Rows.of(["rps", "p50_latency_ms"], [0, 0])
    rps_a = [100.0, 101.0, 99.0, 100.5, 33.0, 100.2]
    rps_b = [90.0, 91.0, 89.0, 90.5, 90.2, 89.8]
    la = np.log(np.array([rps_a, [1 / v for v in rps_a]]))
    lb = np.log(np.array([rps_b, [1 / v for v in rps_b]]))
    j = judge(la, lb, False, rows, primary=(la[[0, 0]], lb[[0, 0]]))
    for row, verdict in ((0, Verdict.REGRESSION), (1, Verdict.REGRESSION)):
        d = decision(j, row, rows)
        assert d.verdict is verdict and d.reason.endswith("; 1 outlier run(s) dropped")
    assert int(j.effect.n_a[0]) == 5 and int(j.effect.n_b[0]) == 6


def test_median_unbiased_sd_hand_values() -> None:
    # χ²_{1, 0.5} = 0.454936 → √(1/0.454936) = 1.48260; χ²_{2, 0.5} = 2 ln 2 = 1.386294
    assert median_unbiased_sd(1.0, 1) == pytest.approx(1.48260, abs=1e-5)
    assert median_unbiased_sd(0.02, 2) == pytest.approx(0.02 * math.sqrt(2 / 1.386294))
    assert math.isnan(median_unbiased_sd(0.02, 0))


def test_constant_sides_have_no_spread_to_judge_by() -> None:
    """Quantized values (a 3-decimal min latency) can repeat exactly on both sides: no
    statistics, the water line judges (a t-test would call any difference certain) — from 3
    runs per side, since 2 equal values happen by chance."""
    verdict, reason, _, statistics = _one([0.103] * 3, [0.111] * 3, "min_latency_ms")
    assert verdict is Verdict.REGRESSION and not statistics
    assert reason == "no spread between runs, no statistics: +7.8% vs the ±5% water line"
    assert _one([0.103] * 3, [0.105] * 3, "min_latency_ms")[0] is Verdict.NO_CHANGE
    verdict, reason, needed, _ = _one([0.103] * 2, [0.111] * 2, "min_latency_ms")
    assert verdict is Verdict.INCONCLUSIVE and needed == 1 and reason.endswith("~1 more runs")
    assert _one([0.103] * 2, [0.111] * 2, "min_latency_ms",
                rule=Rule(constant_runs=2))[0] is Verdict.REGRESSION


def test_paired_ratios_that_repeat_exactly_have_no_spread_either() -> None:
    verdict, reason, _, _ = _one([0.100, 0.110, 0.120], [0.110, 0.121, 0.132],
                                 "min_latency_ms", paired=True)
    assert verdict is Verdict.REGRESSION and reason.startswith("no spread between runs")


def test_inconclusive_beyond_the_minimum_effect_says_why() -> None:
    """3 pairs, +10% at ~1.5% spread: the 95% CI clears +2%, but a paired t on 2 degrees of
    freedom does not reach the corrected level."""
    verdict, reason, _, _ = _one([100.0, 100.0, 100.0], [108.0, 111.0, 110.0], paired=True,
                                 metric="p50_latency_ms", rule=Rule(alpha=0.001))
    assert verdict is Verdict.INCONCLUSIVE
    assert ": 95% CI beyond ±5.0% but p (adj.) " in reason and reason.endswith("> 0.001")
