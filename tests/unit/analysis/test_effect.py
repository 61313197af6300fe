"""Tests for kvperf.analysis.effect: t statistics on logs against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.effect import (
    from_summaries,
    interval,
    p_values,
    paired_effect,
    unpaired_effect,
    value_cv,
)

NAN = math.nan


def test_paired_hand_values() -> None:
    # log ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, se 0.1/√3, df 2, t = 2√3 = 3.4641.
    # Student t with 2 df: P(T > t) = (1 − t/√(t² + 2))/2 = (1 − 0.925820)/2 = 0.037090.
    e = paired_effect(np.zeros(3), np.array([0.1, 0.2, 0.3]))
    assert float(e.estimate) == pytest.approx(0.2)
    assert float(e.sd) == pytest.approx(0.1)
    assert float(e.se) == pytest.approx(0.1 / math.sqrt(3))
    assert float(e.df) == 2 and int(e.n_a) == int(e.n_b) == 3
    assert float(p_values(e)) == pytest.approx(2 * 0.037090, abs=1e-6)
    low, high = interval(e, 0.95)  # t_{2,0.975} = 4.302653
    assert float(low) == pytest.approx(0.2 - 4.302653 * 0.1 / math.sqrt(3), abs=1e-6)
    assert float(high) == pytest.approx(0.2 + 4.302653 * 0.1 / math.sqrt(3), abs=1e-6)


def test_paired_skips_rounds_with_a_missing_side() -> None:
    e = paired_effect(np.array([0.0, NAN, 0.0, 0.0]), np.array([0.1, 0.5, 0.2, 0.3]))
    assert int(e.n_a) == 3 and float(e.estimate) == pytest.approx(0.2)


def test_unpaired_equal_counts_is_pooled_student() -> None:
    # A logs 0, .02, .04 and B .10, .12, .14: d = 0.1, both variances 4e-4, pooled 4e-4,
    # se = √(4e-4 · 2/3) = 0.016330, t = 6.1237 on 4 df.
    la, lb = np.array([0.0, 0.02, 0.04]), np.array([0.10, 0.12, 0.14])
    e = unpaired_effect(la, lb)
    assert float(e.estimate) == pytest.approx(0.1)
    assert float(e.se) == pytest.approx(math.sqrt(4e-4 * 2 / 3))
    assert float(e.df) == 4
    assert float(p_values(e)) == pytest.approx(stats.ttest_ind(lb, la).pvalue)


def test_unpaired_unequal_counts_is_welch() -> None:
    la, lb = np.array([0.0, 0.02, NAN, NAN]), np.array([0.10, 0.12, 0.17, 0.13])
    e = unpaired_effect(la, lb)
    welch = stats.ttest_ind(lb[:4], la[:2], equal_var=False)
    assert float(p_values(e)) == pytest.approx(welch.pvalue)
    assert float(e.df) == pytest.approx(welch.df)


def test_constant_sides_are_exact() -> None:
    same = unpaired_effect(np.array([0.5, 0.5]), np.array([0.5, 0.5]))
    moved = unpaired_effect(np.array([0.5, 0.5]), np.array([0.6, 0.6]))
    assert float(p_values(same)) == 1.0 and float(p_values(moved)) == 0.0
    low, high = interval(moved, 0.95)
    assert float(low) == float(high) == pytest.approx(0.1)


def test_one_value_per_side_has_no_t() -> None:
    e = unpaired_effect(np.array([0.0]), np.array([0.1]))
    assert math.isnan(float(p_values(e))) and float(e.estimate) == pytest.approx(0.1)


def test_value_cv_is_of_the_raw_values() -> None:
    values = np.array([90.0, 100.0, 110.0])  # sd 10, mean 100
    assert float(value_cv(np.log(values))) == pytest.approx(0.10)


def test_batches_broadcast() -> None:
    la = np.zeros((4, 2, 5))
    lb = np.random.default_rng(1).normal(0.05, 0.01, (4, 2, 5))
    e = paired_effect(la, lb)
    assert e.estimate.shape == (4, 2) and p_values(e).shape == (4, 2)


def test_from_summaries_uses_log_normal_moments() -> None:
    # CV 10%: σ² = ln(1.01) = 0.00995; μ = ln(mean) − σ²/2; equal sides → estimate ln(1.1)
    e = from_summaries(*(np.array([v]) for v in (100.0, 10.0, 5, 110.0, 11.0, 5)))
    assert float(e.estimate[0]) == pytest.approx(math.log(1.1))
    assert float(e.se[0]) == pytest.approx(math.sqrt(math.log(1.01) * 2 / 5))
    assert float(e.noise[0]) == pytest.approx(0.10)
    single = from_summaries(*(np.array([v]) for v in (100.0, NAN, 1, 110.0, NAN, 1)))
    assert int(single.n_a[0]) == 1
    assert float(single.estimate[0]) == pytest.approx(math.log(1.1))
