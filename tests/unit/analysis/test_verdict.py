"""Tests for kvperf.analysis.verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvperf.analysis.multiple import benjamini_hochberg
from kvperf.analysis.paired import RatioCI, cv, geomean_ratio_ci, wilcoxon_p
from kvperf.analysis.power import runs_needed
from kvperf.analysis.verdict import (
    Decision,
    MinEffect,
    Verdict,
    decide,
    lower_is_better,
    min_effect_for,
)


def _ci(ratio: float, low: float, high: float, n: int = 10, sd: float = 0.01) -> RatioCI:
    return RatioCI(ratio, low, high, "t", n, sd)


def test_verdict_wording() -> None:
    assert [v.value for v in Verdict] == [
        "regression",
        "improvement",
        "no change",
        "inconclusive",
        "unstable",
        "insufficient data",
    ]
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
    [
        ("rps", False),
        ("ops_per_sec", False),
        ("latency_p50", True),
        ("cpu_percent", True),
        ("instructions", True),
        ("usec_per_call", True),
        ("bytes_per_request", True),
        ("Latency_P99", True),
    ],
)
def test_lower_is_better(name: str, expected: bool) -> None:
    assert lower_is_better(name) is expected


# --- decide: one rule at a time ---------------------------------------------


def test_single_pair_is_insufficient_data() -> None:
    d = decide(RatioCI(1.3, math.nan, math.nan, "none", 1), 0.001, 0.01, 0.05, True)
    assert d.verdict is Verdict.INSUFFICIENT_DATA
    assert d.runs_needed is None


def test_high_cv_is_unstable_even_when_significant() -> None:
    d = decide(_ci(1.3, 1.25, 1.35), 0.001, 0.12, 0.05, True)
    assert d.verdict is Verdict.UNSTABLE
    assert d.reason == "run-to-run CV 12.0% exceeds 10.0%"
    # 10 % exactly is still stable (rule is "> 0.10")
    assert decide(_ci(1.3, 1.25, 1.35), 0.001, 0.10, 0.05, True).verdict is (
        Verdict.REGRESSION
    )
    labelled = decide(_ci(1.3, 1.25, 1.35), 0.001, 0.2, 0.05, True, cv_label="paired CV")
    assert labelled.reason == "paired CV 20.0% exceeds 10.0%"


def test_undefined_cv_is_unstable() -> None:
    assert decide(_ci(1.0, 0.99, 1.01), 0.5, math.nan, 0.05, True).verdict is (
        Verdict.UNSTABLE
    )


@pytest.mark.parametrize(
    ("ratio", "lower_better", "expected"),
    [
        (1.10, True, Verdict.REGRESSION),  # latency up
        (0.90, True, Verdict.IMPROVEMENT),  # latency down
        (1.10, False, Verdict.IMPROVEMENT),  # rps up
        (0.90, False, Verdict.REGRESSION),  # rps down
    ],
)
def test_significant_direction(ratio: float, lower_better: bool, expected: Verdict) -> None:
    d = decide(_ci(ratio, ratio - 0.02, ratio + 0.02), 0.001, 0.01, 0.05, lower_better)
    assert d == Decision(expected, None, d.reason)
    assert d.reason  # non-empty explanation


def test_effect_exactly_min_effect_counts() -> None:
    # |1.25 - 1| = 0.25 exactly in binary floating point; rule is ">= min_effect"
    d = decide(_ci(1.25, 1.2, 1.3), 0.001, 0.01, 0.25, True)
    assert d.verdict is Verdict.REGRESSION


def test_p_equal_to_alpha_is_not_significant() -> None:
    d = decide(_ci(1.25, 1.2, 1.3), 0.01, 0.01, 0.05, True)
    assert d.verdict is Verdict.INCONCLUSIVE


def test_significant_but_small_effect_inside_band_is_no_change() -> None:
    d = decide(_ci(1.01, 1.005, 1.015), 0.0001, 0.01, 0.02, False)
    assert d.verdict is Verdict.NO_CHANGE
    assert d.runs_needed is None


def test_tight_interval_inside_band_is_no_change() -> None:
    assert decide(_ci(1.0, 0.981, 1.019), 0.6, 0.01, 0.02, False).verdict is (
        Verdict.NO_CHANGE
    )
    # interval edge just outside the band -> not "no change"
    assert decide(_ci(1.0, 0.979, 1.019), 0.6, 0.01, 0.02, False).verdict is (
        Verdict.INCONCLUSIVE
    )


def test_inconclusive_runs_needed_from_power() -> None:
    # sd_log 0.05, min effect 5 %: runs_needed(0.05, 0.05) = 20 pairs (see test_power),
    # 5 already done -> ~15 more.
    d = decide(_ci(1.03, 0.95, 1.12, n=5, sd=0.05), 0.3, 0.03, 0.05, True)
    assert runs_needed(0.05, 0.05) == 20
    assert d == Decision(Verdict.INCONCLUSIVE, 15, "needs ~15 more runs")


def test_inconclusive_runs_needed_respects_wilcoxon_floor() -> None:
    # Tiny spread: the t-test power needs only 2 pairs, but Wilcoxon needs 8 at
    # alpha 0.01 (2/2^7 = 0.0156 >= 0.01), so with 4 pairs: 4 more.
    d = decide(_ci(1.10, 1.09, 1.11, n=4, sd=0.001), 0.125, 0.01, 0.05, True)
    assert d == Decision(Verdict.INCONCLUSIVE, 4, "needs ~4 more runs")


def test_inconclusive_runs_needed_at_least_one() -> None:
    d = decide(_ci(1.10, 0.9, 1.3, n=500, sd=0.001), 0.02, 0.01, 0.05, True)
    assert d.verdict is Verdict.INCONCLUSIVE
    assert d.runs_needed == 1


def test_inconclusive_without_spread_has_no_estimate() -> None:
    d = decide(RatioCI(1.1, 0.9, 1.3, "t", 5), 0.3, 0.01, 0.05, True)
    assert d == Decision(Verdict.INCONCLUSIVE, None, "needs more runs")


# --- decide on simulated benchmark data --------------------------------------


def _decide_on(a: np.ndarray, b: np.ndarray, metric: str) -> Decision:
    ci = geomean_ratio_ci(a, b)
    p_adj = benjamini_hochberg([wilcoxon_p(a, b)])[0]
    return decide(ci, p_adj, cv(b / a), min_effect_for(metric), lower_is_better(metric))


def test_clean_15_percent_latency_shift_with_10_pairs_is_regression() -> None:
    rng = np.random.default_rng(0)
    a = 100.0 * (1.0 + 0.01 * rng.standard_normal(10))
    b = 115.0 * (1.0 + 0.01 * rng.standard_normal(10))
    d = _decide_on(a, b, "latency_p99")
    assert d.verdict is Verdict.REGRESSION
    # Same data read as throughput: higher is better -> improvement
    assert _decide_on(a, b, "rps").verdict is Verdict.IMPROVEMENT


def test_clean_shift_with_7_pairs_cannot_be_significant() -> None:
    # Wilcoxon floor: with 7 pairs the smallest two-sided p is 2/128 = 0.0156 >= 0.01
    rng = np.random.default_rng(0)
    a = 100.0 * (1.0 + 0.01 * rng.standard_normal(7))
    b = 115.0 * (1.0 + 0.01 * rng.standard_normal(7))
    assert wilcoxon_p(a, b) == pytest.approx(2 / 128)
    d = _decide_on(a, b, "latency_p99")
    assert d.verdict is Verdict.INCONCLUSIVE
    assert d.runs_needed == 1  # 7 + 1 = 8 pairs reach the Wilcoxon floor


@pytest.mark.parametrize("seed", range(20))
def test_a_a_with_3_percent_noise_never_reports_a_change(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = 100.0 * (1.0 + 0.03 * rng.standard_normal(10))
    b = 100.0 * (1.0 + 0.03 * rng.standard_normal(10))
    for metric in ("rps", "latency_p50"):
        assert _decide_on(a, b, metric).verdict in (Verdict.NO_CHANGE, Verdict.INCONCLUSIVE)
