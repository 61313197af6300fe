"""Tests for kvperf.analysis.multiple."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.multiple import benjamini_hochberg


def test_hand_computed_example() -> None:
    # p = [0.01, 0.04, 0.03, 0.005], m = 4. Sorted with rank j and m*p/j:
    #   0.005 (j=1) -> 0.02, 0.01 (j=2) -> 0.02, 0.03 (j=3) -> 0.04, 0.04 (j=4) -> 0.04
    # running minimum from the largest: 0.04, 0.04, 0.02, 0.02 -> back in input order:
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx(
        [0.02, 0.04, 0.04, 0.02], rel=1e-12
    )


def test_step_up_makes_adjusted_values_monotone() -> None:
    # p = [0.04, 0.045]: m*p/j = [0.08, 0.045]; step-up min gives 0.045 for both
    assert benjamini_hochberg([0.04, 0.045]) == pytest.approx([0.045, 0.045], rel=1e-12)


def test_matches_scipy_false_discovery_control() -> None:
    rng = np.random.default_rng(4)
    p = np.concatenate([rng.uniform(0, 1, 30), rng.uniform(0, 0.01, 10), [1.0, 0.0, 0.5, 0.5]])
    expected = stats.false_discovery_control(p, method="bh")
    np.testing.assert_allclose(benjamini_hochberg(list(p)), expected, rtol=1e-12)


def test_adjusted_values_are_capped_and_not_below_raw() -> None:
    p = [0.9, 0.8, 0.99, 0.2, 0.001]
    adjusted = benjamini_hochberg(p)
    assert all(q <= 1.0 for q in adjusted)
    assert all(q >= raw for q, raw in zip(adjusted, p, strict=True))


def test_nan_passes_through_and_is_not_counted() -> None:
    # Only two finite p-values -> m = 2: 0.01*2/1 = 0.02, 0.04*2/2 = 0.04
    out = benjamini_hochberg([0.01, math.nan, 0.04])
    assert out[0] == pytest.approx(0.02, rel=1e-12)
    assert math.isnan(out[1])
    assert out[2] == pytest.approx(0.04, rel=1e-12)


def test_all_nan_and_empty() -> None:
    out = benjamini_hochberg([math.nan, math.nan])
    assert len(out) == 2
    assert all(math.isnan(v) for v in out)
    assert benjamini_hochberg([]) == []


def test_single_pvalue_unchanged() -> None:
    assert benjamini_hochberg([0.03]) == [pytest.approx(0.03, rel=1e-15)]


@pytest.mark.parametrize("bad", [[-0.1], [1.5], [0.2, 2.0]])
def test_rejects_out_of_range(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        benjamini_hochberg(bad)
