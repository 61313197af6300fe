"""Tests for kvperf.analysis.ranks: exact rank tests, vectorised, against scipy and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.ranks import (
    average_ranks,
    mann_whitney_p,
    ranks_agree,
    signed_rank_p,
    smallest_mannwhitney_p,
    smallest_wilcoxon_p,
)


def test_smallest_attainable_p_values() -> None:
    assert smallest_wilcoxon_p(3) == 0.25 and smallest_wilcoxon_p(8) == 2 / 256
    assert smallest_mannwhitney_p(3, 3) == pytest.approx(0.1)  # 2 / C(6, 3)
    assert smallest_mannwhitney_p(6, 6) == pytest.approx(2 / 924)
    assert smallest_wilcoxon_p(2000) == 0.0 and smallest_mannwhitney_p(1000, 1000) == 0.0


def test_signed_rank_hand_value() -> None:
    # +3, −1, +2: W+ = 3 + 2 = 5 of 6; P(W+ ≥ 5) = #{ {2,3}, {1,2,3} } / 8 = 1/4 → p = 0.5
    p, floor = signed_rank_p(np.array([[3.0, -1.0, 2.0]]))
    assert float(p[0]) == pytest.approx(0.5) and float(floor[0]) == 0.25


@pytest.mark.parametrize("n", [2, 3, 5, 8, 12, 20])
def test_signed_rank_matches_scipy(n: int) -> None:
    x = np.random.default_rng(n).normal(0.3, 1.0, (50, n))
    p, _ = signed_rank_p(x)
    np.testing.assert_allclose(p, stats.wilcoxon(x, axis=-1, method="exact").pvalue,
                               rtol=1e-12)


@pytest.mark.parametrize(("na", "nb"), [(2, 2), (3, 3), (3, 5), (6, 6), (10, 7)])
def test_mann_whitney_matches_scipy(na: int, nb: int) -> None:
    rng = np.random.default_rng(na * 10 + nb)
    a, b = rng.normal(0, 1, (50, na)), rng.normal(0.8, 1, (50, nb))
    p, _ = mann_whitney_p(a, b)
    np.testing.assert_allclose(
        p, stats.mannwhitneyu(a, b, axis=-1, method="exact").pvalue, rtol=1e-12)


def test_rows_of_different_counts_and_zeros() -> None:
    lr = np.array([[0.1, 0.2, math.nan, math.nan], [0.0, 0.1, 0.2, 0.3]])
    p, floor = signed_rank_p(lr)  # the zero is dropped: both rows have 2 or 3 nonzero
    assert float(floor[0]) == 0.5 and float(floor[1]) == 0.25
    assert float(p[1]) == pytest.approx(0.25)


def test_ranks_agree_only_judges_selected_rows() -> None:
    la = np.zeros((2, 6))
    lb = np.array([[0.1, 0.1, 0.1, -0.1, -0.1, 0.1], [0.1, 0.11, 0.12, 0.1, 0.1, 0.1]])
    assert ranks_agree(la, lb, True, np.array([True, True])).tolist() == [False, True]
    assert ranks_agree(la, lb, True, np.array([False, True])).tolist() == [True, True]


def test_large_counts_use_the_normal_approximation() -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(0.2, 1.0, (20, 60))
    p, _ = signed_rank_p(x)
    np.testing.assert_allclose(
        p, stats.wilcoxon(x, axis=-1, method="asymptotic", correction=True).pvalue, rtol=1e-6)
    a, b = rng.normal(0, 1, (20, 30)), rng.normal(0.5, 1, (20, 35))
    p, _ = mann_whitney_p(a, b)
    np.testing.assert_allclose(
        p, stats.mannwhitneyu(a, b, axis=-1, method="asymptotic").pvalue, rtol=1e-6)


def test_average_ranks_match_scipy_with_ties() -> None:
    rows = np.random.default_rng(3).integers(0, 4, (50, 9)).astype(np.float64)  # many ties
    assert np.array_equal(average_ranks(rows), stats.rankdata(rows, axis=-1))
