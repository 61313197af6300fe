"""Tests for kvperf.analysis.multiple."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.multiple import benjamini_hochberg, bh_adjust, simes, two_stage


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


# --- Simes and the two-stage (families, then members) correction --------------------------


def test_simes_hand_value() -> None:
    # p = 0.001, 0.002, 0.5, 0.3 (m = 4): sorted m·p/i = 0.004, 0.004, 0.4, 0.5 → 0.004
    assert float(simes(np.array([0.001, 0.002, 0.5, 0.3]))) == pytest.approx(0.004)
    assert float(simes(np.array([0.02, math.nan]))) == pytest.approx(0.02)  # m = 1


def test_two_stage_hand_values() -> None:
    """Family 0 Simes 0.004, family 1 Simes 0.08; BH over the two: 0.008 and 0.08, so one
    family is selected (R = 1, K = 2) and tested within at 0.01 · 1/2 = 0.005: BH within
    family 0 gives 0.004, 0.004, 0.4, 0.5, scaled by K/R = 2."""
    p = np.array([0.001, 0.002, 0.5, 0.3, 0.02, 0.4, 0.6, 0.9])
    family = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    adjusted, threshold = two_stage(p, family, 0.01)
    np.testing.assert_allclose(adjusted[:4], [0.008, 0.008, 1.0, 0.8])
    assert (adjusted[4:] > 0.01).all()
    # thresholds: significant rows α·R/K·R_f/m_f = 0.01·½·2/4; the others of family 0
    # α·½·3/4; family 1 (needs selecting: R + 1 = 2) α·2/2·1/4
    np.testing.assert_allclose(threshold, [0.0025, 0.0025, 0.00375, 0.00375] + [0.0025] * 4)


def test_two_stage_with_one_family_is_benjamini_hochberg() -> None:
    p = np.random.default_rng(3).uniform(0, 0.05, 12)
    adjusted, _ = two_stage(p, np.zeros(12, dtype=np.int64), 0.01)
    np.testing.assert_allclose(adjusted, bh_adjust(p))


def test_bh_adjust_batches_along_the_last_axis() -> None:
    p = np.array([[0.01, 0.04, 0.03, 0.005], [0.5, 0.5, math.nan, 0.001]])
    out = bh_adjust(p)
    np.testing.assert_allclose(out[0], [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(out[1], [0.5, 0.5, math.nan, 0.003])


def test_untested_rows_do_not_count_as_significant() -> None:
    """A NaN row (not tested) of a selected family must not raise its members' thresholds:
    BH within the family at 0.005 rejects only the first row (0.004 > 0.005·2/3)."""
    p = np.array([0.0002, 0.004, math.nan, 0.5, 0.6, 0.7])
    adjusted, threshold = two_stage(p, np.array([0, 0, 0, 0, 1, 1]), 0.01)
    assert math.isnan(adjusted[2]) and adjusted[0] <= 0.01 < adjusted[1]
    assert threshold[1] == pytest.approx(0.01 * 1 / 2 * 2 / 3)  # α·R/K·(R_f + 1)/m_f
