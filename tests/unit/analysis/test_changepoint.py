"""Tests for kvperf.analysis.changepoint."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.changepoint import (
    ChangePoint,
    _windowed,
    classify,
    detect,
    energy_statistic,
    prefix_abs_deviation,
    split_pvalue,
)


def _noisy(n: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 100.0 * (1.0 + noise * rng.standard_normal(n))


def _q_brute(x: np.ndarray, tau: int) -> float:
    """Matteson & James (2014) eq. (4)-(5) with alpha = 1, straight from the definition."""
    left, right = x[:tau], x[tau:]
    n, m = left.size, right.size
    between = np.abs(left[:, None] - right[None, :]).mean()
    within_l = np.abs(left[:, None] - left[None, :]).sum() / (n * (n - 1))
    within_r = np.abs(right[:, None] - right[None, :]).sum() / (m * (m - 1))
    return float(n * m / (n + m) * (2 * between - within_l - within_r))


# --- building blocks ---------------------------------------------------------


def test_prefix_abs_deviation_hand_values() -> None:
    # x = [3, 1, 2]: d0 = 0, d1 = |1-3| = 2, d2 = |2-3| + |2-1| = 2
    np.testing.assert_allclose(prefix_abs_deviation(np.array([3.0, 1.0, 2.0])), [0, 2, 2])


@pytest.mark.parametrize("n", [1, 31, 32, 33, 200, 1500])
def test_prefix_abs_deviation_matches_brute_force(n: int) -> None:
    x = np.random.default_rng(n).normal(size=n)
    x[n // 2 :: 7] = x[0]  # include ties
    brute = np.array([np.abs(x[t] - x[:t]).sum() for t in range(n)])
    np.testing.assert_allclose(prefix_abs_deviation(x), brute, rtol=1e-10, atol=1e-9)


def test_energy_statistic_hand_value() -> None:
    # x = [0,0,0,1,1,1], tau = 3: between-mean |x - y| = 1, within = 0 on both sides
    # Q = (3*3/6) * (2*1 - 0 - 0) = 3. Other tau leave a side shorter than 3 -> nan.
    q = energy_statistic(np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))
    assert q[3] == pytest.approx(3.0, rel=1e-12)
    assert np.isnan(np.delete(q, 3)).all()


def test_energy_statistic_matches_definition() -> None:
    x = np.random.default_rng(5).normal(10.0, 2.0, size=80)
    q = energy_statistic(x, min_size=2)
    expected = [_q_brute(x, t) for t in range(2, 79)]
    np.testing.assert_allclose(q[2:79], expected, rtol=1e-9, atol=1e-9)
    assert np.isnan(q[:2]).all() and np.isnan(q[79:]).all()


def test_split_pvalue_matches_scipy_student_t() -> None:
    rng = np.random.default_rng(3)
    left, right = rng.normal(0, 1, 7), rng.normal(1, 2, 11)
    expected = stats.ttest_ind(left, right, equal_var=True).pvalue
    assert split_pvalue(left, right) == pytest.approx(expected, rel=1e-12)


def test_split_pvalue_degenerate_sides() -> None:
    assert split_pvalue(np.array([2.0, 2.0]), np.array([2.0, 2.0, 2.0])) == 1.0
    assert split_pvalue(np.array([2.0, 2.0]), np.array([3.0, 3.0, 3.0])) == 0.0
    assert split_pvalue(np.array([1.0]), np.array([5.0, 6.0])) == 1.0


# --- detect ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_single_10_percent_step(seed: int) -> None:
    x = _noisy(60, 0.01, seed)
    x[37:] *= 1.10
    cps = detect(x)
    assert len(cps) == 1
    cp = cps[0]
    assert abs(cp.index - 37) <= 1
    assert cp.magnitude == pytest.approx(0.10, abs=0.01)
    assert cp.before_mean == pytest.approx(100.0, rel=0.01)
    assert cp.after_mean == pytest.approx(110.0, rel=0.01)
    assert cp.magnitude == pytest.approx(cp.after_mean / cp.before_mean - 1.0, rel=1e-12)
    assert cp.pvalue < 0.001
    assert classify(cp, lower_is_better=True) == "regression"
    assert classify(cp, lower_is_better=False) == "improvement"


def test_downward_step_direction() -> None:
    x = _noisy(60, 0.01, 11)
    x[20:] *= 0.9
    (cp,) = detect(x)
    assert abs(cp.index - 20) <= 1
    assert cp.magnitude == pytest.approx(-0.10, abs=0.01)
    assert classify(cp, lower_is_better=True) == "improvement"
    assert classify(cp, lower_is_better=False) == "regression"


@pytest.mark.parametrize("window", [None, 30])
def test_two_steps(window: int | None) -> None:
    x = _noisy(90, 0.01, 1)
    x[30:] *= 1.10
    x[60:] *= 0.92
    cps = detect(x, window=window)
    assert [cp.index for cp in cps] in ([29, 60], [30, 60], [31, 60], [30, 59], [30, 61])
    assert cps[0].magnitude == pytest.approx(0.10, abs=0.01)
    assert cps[1].magnitude == pytest.approx(-0.08, abs=0.01)
    # neighbouring segments share their mean
    assert cps[0].after_mean == cps[1].before_mean


@pytest.mark.parametrize("seed", range(10))
def test_pure_noise_has_no_change_points(seed: int) -> None:
    assert detect(_noisy(100, 0.03, seed)) == []


def test_constant_series_has_none() -> None:
    assert detect([5.0] * 50) == []
    assert detect([5.0] * 50, window=10) == []


def test_noise_free_step_is_found_with_p_zero() -> None:
    (cp,) = detect([1.0] * 10 + [2.0] * 10)
    assert cp == ChangePoint(10, 1.0, 2.0, 1.0, 0.0)


def test_short_series_has_none() -> None:
    assert detect([1.0, 1.0, 100.0, 100.0, 100.0]) == []  # 5 < 2 * 3
    assert detect([]) == []
    assert len(detect([1.0, 1.0, 1.01, 100.0, 100.0, 100.01])) == 1  # 6 = 2 * 3
    assert detect([1.0, 1.01, 100.0, 100.01], min_size=2) != []
    assert detect([1.0, 1.01, 100.0, 100.01]) == []


def test_min_magnitude_drops_small_changes() -> None:
    x = _noisy(80, 0.002, 2)
    x[40:] *= 1.02
    assert len(detect(x)) == 1
    assert detect(x, min_magnitude=0.05) == []


def test_weak_change_points_are_dropped_by_merge() -> None:
    # Windowed first pass at the relaxed threshold (10 x 0.001) finds candidates in
    # this noise series; re-testing against neighbouring segments removes them.
    x = _noisy(100, 0.03, 2)
    assert _windowed(x, 30, 0.01, 3) != []
    assert detect(x, window=30) == []


def test_every_reported_point_is_significant_against_neighbours() -> None:
    x = _noisy(300, 0.02, 9)
    x[100:] *= 1.05
    x[200:] *= 1.05
    cps = detect(x, window=50)
    bounds = [0, *[cp.index for cp in cps], x.size]
    for k, cp in enumerate(cps):
        p = stats.ttest_ind(x[bounds[k] : cp.index], x[cp.index : bounds[k + 2]]).pvalue
        assert cp.pvalue == pytest.approx(p, rel=1e-9)
        assert cp.pvalue < 0.001


def test_deterministic() -> None:
    x = _noisy(500, 0.02, 4)
    x[250:] *= 1.03
    assert detect(x) == detect(x)
    assert detect(x, window=60) == detect(x, window=60)


def test_ten_thousand_points_is_fast() -> None:
    x = _noisy(10_000, 0.01, 6)
    x[3_000:] *= 1.05
    x[7_000:] *= 0.97
    start = time.perf_counter()
    cps = detect(x)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0
    assert [cp.index for cp in cps] == [3_000, 7_000]


@pytest.mark.parametrize(
    ("series", "kwargs"),
    [
        ([1.0, float("nan"), 2.0], {}),
        ([[1.0, 2.0]], {}),
        ([1.0] * 10, {"min_size": 1}),
        ([1.0] * 10, {"window": 5}),
    ],
)
def test_rejects_bad_input(series: list[Any], kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        detect(series, **kwargs)


def test_classify_needs_a_direction() -> None:
    with pytest.raises(ValueError):
        classify(ChangePoint(5, 1.0, 1.0, 0.0, 0.5), lower_is_better=True)
