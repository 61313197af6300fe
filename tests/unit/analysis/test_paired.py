"""Tests for kvperf.analysis.paired."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.paired import (
    BOOTSTRAP_RESAMPLES,
    cv,
    geomean_ratio_ci,
    log_ratios,
    mannwhitney_p,
    sample_skewness,
    wilcoxon_p,
)


def _pairs(lr: list[float]) -> tuple[list[float], list[float]]:
    """A = 1.0 everywhere, B = exp(lr), so ln(B/A) is exactly lr."""
    return [1.0] * len(lr), [math.exp(v) for v in lr]


# --- log_ratios -------------------------------------------------------------


def test_log_ratios_hand_values() -> None:
    # ln(2/1) = ln 2, ln(2/2) = 0, ln(2/4) = -ln 2
    out = log_ratios([1.0, 2.0, 4.0], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(out, [math.log(2), 0.0, -math.log(2)], rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.0, 2.0], [1.0]),  # length mismatch
        ([1.0, 0.0], [1.0, 1.0]),  # zero
        ([1.0, 1.0], [1.0, -3.0]),  # negative
        ([1.0, math.nan], [1.0, 1.0]),  # nan
        ([1.0, math.inf], [1.0, 1.0]),  # inf
        ([], []),  # empty
    ],
)
def test_log_ratios_rejects_bad_input(a: list[float], b: list[float]) -> None:
    with pytest.raises(ValueError):
        log_ratios(a, b)


def test_log_ratios_rejects_2d() -> None:
    with pytest.raises(ValueError):
        log_ratios(np.ones((2, 2)), np.ones((2, 2)))


# --- skewness ---------------------------------------------------------------


def test_sample_skewness_hand_value() -> None:
    # x = nine 0s and one 1: mean 0.1, m2 = (9*0.01 + 0.81)/10 = 0.09,
    # m3 = (9*(-0.001) + 0.729)/10 = 0.072, g1 = 0.072 / 0.09**1.5 = 2.6667,
    # G1 = g1 * sqrt(10*9) / 8 = 3.16228
    x = np.array([0.0] * 9 + [1.0])
    assert sample_skewness(x) == pytest.approx(3.1622776601683795, rel=1e-12)
    assert sample_skewness(x) == pytest.approx(stats.skew(x, bias=False), rel=1e-12)


def test_sample_skewness_degenerate() -> None:
    assert math.isnan(sample_skewness(np.array([1.0, 2.0])))
    assert sample_skewness(np.array([3.0, 3.0, 3.0])) == 0.0


# --- geomean_ratio_ci -------------------------------------------------------


def test_geomean_ratio_t_interval_hand_values() -> None:
    # lr = [.1, .2, 0, .1, .1, .1]: mean 0.1, SS = .01 + .01 = .02, s^2 = .02/5 = .004,
    # se = sqrt(.004/6) = 0.0258199, t_{.975,5} = 2.5705818, half = 0.0663721
    # log CI = [0.0336279, 0.1663721] -> ratio e^.1 = 1.1051709, CI [1.0341997, 1.1810125]
    a, b = _pairs([0.1, 0.2, 0.0, 0.1, 0.1, 0.1])
    ci = geomean_ratio_ci(a, b)
    assert ci.method == "t"  # n = 6 and symmetric (skew 0) -> t
    assert ci.n == 6
    assert ci.ratio == pytest.approx(1.1051709180756477, rel=1e-12)
    assert ci.low == pytest.approx(1.0341997, rel=1e-6)
    assert ci.high == pytest.approx(1.1810125, rel=1e-6)
    assert ci.sd_log == pytest.approx(math.sqrt(0.004), rel=1e-12)


def test_geomean_ratio_t_interval_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    a = 100.0 * np.exp(rng.normal(0.0, 0.02, 12))
    b = a * np.exp(rng.normal(0.03, 0.02, 12))
    ci = geomean_ratio_ci(a, b, confidence=0.9, method="t")
    ref = stats.ttest_1samp(np.log(b / a), 0.0).confidence_interval(0.9)
    assert ci.low == pytest.approx(math.exp(ref.low), rel=1e-12)
    assert ci.high == pytest.approx(math.exp(ref.high), rel=1e-12)
    assert ci.ratio == pytest.approx(float(stats.gmean(b / a)), rel=1e-12)


def test_geomean_ratio_bootstrap_two_pairs_exact() -> None:
    # lr = [0, 0.2]: resampled means are 0 (p=1/4), 0.1 (p=1/2), 0.2 (p=1/4), so the
    # 2.5 % and 97.5 % quantiles of 10,000 resamples are 0 and 0.2 -> CI [1, e^0.2].
    a, b = _pairs([0.0, 0.2])
    ci = geomean_ratio_ci(a, b)
    assert ci.method == "bootstrap"  # n < 6
    assert ci.ratio == pytest.approx(math.exp(0.1), rel=1e-12)
    assert ci.low == pytest.approx(1.0, abs=1e-12)
    assert ci.high == pytest.approx(math.exp(0.2), rel=1e-12)


def test_geomean_ratio_bootstrap_close_to_scipy() -> None:
    lr = [0.01, 0.05, 0.03, 0.08, 0.02]
    a, b = _pairs(lr)
    ci = geomean_ratio_ci(a, b, seed=3)
    ref = stats.bootstrap(
        (np.array(lr),),
        np.mean,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(11),
    ).confidence_interval
    assert ci.method == "bootstrap"
    # Different RNG streams: agree to Monte-Carlo error (~0.002 on the log scale).
    assert math.log(ci.low) == pytest.approx(ref.low, abs=0.004)
    assert math.log(ci.high) == pytest.approx(ref.high, abs=0.004)


def test_geomean_ratio_bootstrap_is_seeded() -> None:
    a, b = _pairs([0.01, 0.05, 0.03, 0.08, 0.02])
    assert geomean_ratio_ci(a, b, seed=5) == geomean_ratio_ci(a, b, seed=5)
    assert geomean_ratio_ci(a, b, seed=5) != geomean_ratio_ci(a, b, seed=6)


def test_auto_uses_bootstrap_for_skewed_log_ratios() -> None:
    # skewness 3.16 (see test_sample_skewness_hand_value) > 1 with n = 10
    a, b = _pairs([0.0] * 9 + [1.0])
    assert geomean_ratio_ci(a, b).method == "bootstrap"
    assert geomean_ratio_ci(a, b, method="t").method == "t"


def test_auto_uses_t_for_symmetric_large_sample() -> None:
    a, b = _pairs([0.01, -0.01, 0.02, -0.02, 0.0, 0.01, -0.01])
    assert geomean_ratio_ci(a, b).method == "t"
    assert geomean_ratio_ci(a, b, method="bootstrap").method == "bootstrap"


def test_single_pair_has_no_interval() -> None:
    ci = geomean_ratio_ci([100.0], [110.0])
    assert ci.ratio == pytest.approx(1.1, rel=1e-12)
    assert math.isnan(ci.low)
    assert math.isnan(ci.high)
    assert ci.n == 1
    assert ci.method == "none"


def test_identical_log_ratios_give_degenerate_interval() -> None:
    ci = geomean_ratio_ci([3.0, 3.0, 3.0], [6.0, 6.0, 6.0])
    assert ci.ratio == pytest.approx(2.0, rel=1e-15)
    assert ci.low == ci.ratio == ci.high
    assert ci.sd_log == 0.0
    # Equal ratios up to rounding: interval collapses to the ratio within a few ulps.
    ci = geomean_ratio_ci([100.0, 200.0, 50.0], [105.0, 210.0, 52.5])
    assert ci.low == pytest.approx(1.05, rel=1e-12)
    assert ci.high == pytest.approx(1.05, rel=1e-12)


def test_geomean_ratio_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        geomean_ratio_ci([1.0, 2.0], [1.0, 2.0], confidence=1.0)
    with pytest.raises(ValueError):
        geomean_ratio_ci([1.0, 2.0], [1.0, 2.0], method="z")  # type: ignore[arg-type]


# --- wilcoxon_p -------------------------------------------------------------


def test_wilcoxon_all_same_sign_exact_minimum() -> None:
    # 8 pairs all B > A: exact two-sided p = 2 / 2^8 = 0.0078125
    a = [100.0] * 8
    b = [100.0 * (1.0 + 0.01 * k) for k in range(1, 9)]
    assert wilcoxon_p(a, b) == pytest.approx(0.0078125, rel=1e-12)


def test_wilcoxon_matches_scipy_on_log_ratios() -> None:
    rng = np.random.default_rng(1)
    a = 100.0 * np.exp(rng.normal(0.0, 0.03, 15))
    b = 100.0 * np.exp(rng.normal(0.01, 0.03, 15))
    expected = stats.wilcoxon(np.log(b) - np.log(a)).pvalue
    assert wilcoxon_p(a, b) == pytest.approx(expected, rel=1e-12)


def test_wilcoxon_all_zero_differences() -> None:
    assert wilcoxon_p([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0


# --- mannwhitney_p ----------------------------------------------------------


def test_mannwhitney_hand_value() -> None:
    # Complete separation of 3 vs 3: U = 0, P(U = 0) = 1 / C(6,3) = 1/20, two-sided 0.1
    assert mannwhitney_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(0.1, rel=1e-12)


def test_mannwhitney_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(10, 1, 9), rng.normal(11, 1, 13)
    expected = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
    assert mannwhitney_p(a, b) == pytest.approx(expected, rel=1e-12)


# --- cv ---------------------------------------------------------------------


def test_cv_hand_value() -> None:
    # [1, 2, 3]: mean 2, sample variance (1 + 0 + 1)/2 = 1 -> s = 1, CV = 0.5
    assert cv([1.0, 2.0, 3.0]) == pytest.approx(0.5, rel=1e-15)


def test_cv_matches_scipy_variation() -> None:
    x = [10.0, 12.0, 9.5, 11.0]
    assert cv(x) == pytest.approx(stats.variation(x, ddof=1), rel=1e-12)


def test_cv_degenerate() -> None:
    assert math.isnan(cv([5.0]))
    assert math.isnan(cv([]))
    assert math.isnan(cv([-1.0, 1.0]))
    assert cv([4.0, 4.0]) == 0.0
