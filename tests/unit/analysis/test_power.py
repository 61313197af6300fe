"""Tests for kvperf.analysis.power."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.power import (
    _nct_cdf_approx,
    paired_power,
    runs_needed,
    runs_needed_unpaired,
    unpaired_power,
    wilcoxon_min_pairs,
)

# z_{0.995} = 2.5758293, z_{0.90} = 1.2815516, sum = 3.8573809 (alpha 0.01, power 0.90)
Z_SUM = 3.8573809


def _nct_power(df: int, ncp: float, alpha: float) -> float:
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))


def test_paired_hand_normal_approximation() -> None:
    # sd 0.05, effect 5 %: delta = ln 1.05 = 0.0487902; sd/delta = 1.0247953
    # n0 = (3.8573809 * 1.0247953)^2 = 3.9530250^2 = 15.626 -> normal approx 16
    n0 = (Z_SUM * 0.05 / math.log(1.05)) ** 2
    assert n0 == pytest.approx(15.626, abs=1e-3)
    n = runs_needed(0.05, 0.05)
    # The t-test needs a few more pairs than the normal approximation at small n.
    assert math.ceil(n0) <= n <= math.ceil(n0) + 5
    assert n == 20


def test_paired_result_is_the_smallest_n_reaching_power() -> None:
    delta, sd = math.log(1.05), 0.05
    n = runs_needed(sd, 0.05)
    assert _nct_power(n - 1, delta * math.sqrt(n) / sd, 0.01) >= 0.90
    assert _nct_power(n - 2, delta * math.sqrt(n - 1) / sd, 0.01) < 0.90


def test_paired_power_by_simulation() -> None:
    # Simulate 40,000 paired experiments with n = 20 log ratios ~ N(ln 1.05, 0.05):
    # the two-sided t-test at alpha 0.01 should reject at the computed power (~0.9).
    rng = np.random.default_rng(0)
    n, delta, sd = 20, math.log(1.05), 0.05
    x = rng.normal(delta, sd, size=(40_000, n))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.mean(np.abs(t) > stats.t.ppf(0.995, n - 1))
    assert rejected == pytest.approx(paired_power(n, sd, 0.05, 0.01), abs=0.006)


def test_paired_large_n_matches_normal_approximation() -> None:
    # sd 0.2, effect 1 %: delta = 0.00995033, n0 = (3.8573809 * 0.2 / 0.00995033)^2 = 6011.3
    n = runs_needed(0.2, 0.01)
    assert 6012 <= n <= 6016


def test_unpaired_hand_normal_approximation() -> None:
    # cv 5 %: sd(ln X) = sqrt(ln(1 + 0.0025)) = 0.0499688
    # n0 per side = 2 * (3.8573809 * 0.0499688 / 0.0487902)^2 = 2 * 15.607 = 31.214 -> 32
    n = runs_needed_unpaired(0.05, 0.05)
    assert 32 <= n <= 35
    sd = math.sqrt(math.log1p(0.05**2))

    def ncp(k: int) -> float:
        return math.log(1.05) / (sd * math.sqrt(2 / k))

    assert _nct_power(2 * n - 2, ncp(n), 0.01) >= 0.90
    assert _nct_power(2 * n - 4, ncp(n - 1), 0.01) < 0.90
    assert unpaired_power(n, sd, 0.05, 0.01) == pytest.approx(_nct_power(2 * n - 2, ncp(n), 0.01))


def test_unpaired_needs_more_than_paired_for_same_spread() -> None:
    # Independent samples with per-run CV c have sd of the difference ~ c*sqrt(2)
    assert runs_needed_unpaired(0.03, 0.05) > runs_needed(0.03, 0.05)


def test_minimum_is_two() -> None:
    assert runs_needed(0.001, 0.5) == 2
    assert runs_needed(0.0, 0.05) == 2
    assert runs_needed_unpaired(0.0, 0.05) == 2
    assert runs_needed_unpaired(0.001, 0.5) == 2


def test_negative_effect_is_symmetric_on_log_scale() -> None:
    # effect -1/21 is the log-scale mirror of +5 %: ln(1 - 1/21) = ln(20/21) = -ln 1.05
    assert runs_needed(0.05, -1 / 21) == runs_needed(0.05, 0.05)


@pytest.mark.parametrize("fn", [runs_needed, runs_needed_unpaired])
def test_monotonicity(fn: Callable[..., int]) -> None:
    spreads = [fn(s, 0.05) for s in (0.01, 0.02, 0.04, 0.08, 0.16)]
    assert spreads == sorted(spreads) and spreads[0] < spreads[-1]
    effects = [fn(0.05, e) for e in (0.01, 0.02, 0.05, 0.1, 0.2)]
    assert effects == sorted(effects, reverse=True) and effects[0] > effects[-1]
    powers = [fn(0.05, 0.05, 0.01, p) for p in (0.5, 0.8, 0.9, 0.99)]
    assert powers == sorted(powers) and powers[0] < powers[-1]
    alphas = [fn(0.05, 0.05, a) for a in (0.1, 0.05, 0.01, 0.001)]
    assert alphas == sorted(alphas) and alphas[0] < alphas[-1]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"effect": 0.0},
        {"effect": -1.0},
        {"effect": math.nan},
        {"alpha": 0.0},
        {"alpha": 1.0},
        {"power": 1.0},
    ],
)
def test_rejects_bad_arguments(kwargs: dict[str, float]) -> None:
    args = {"effect": 0.05, "alpha": 0.01, "power": 0.9} | kwargs
    with pytest.raises(ValueError):
        runs_needed(0.05, **args)
    with pytest.raises(ValueError):
        runs_needed_unpaired(0.05, **args)


def test_rejects_bad_spread() -> None:
    with pytest.raises(ValueError):
        runs_needed(-0.1, 0.05)
    with pytest.raises(ValueError):
        runs_needed_unpaired(math.inf, 0.05)


@pytest.mark.parametrize(("alpha", "expected"), [(0.01, 8), (0.05, 6), (0.0625, 6), (0.001, 11)])
def test_wilcoxon_min_pairs(alpha: float, expected: int) -> None:
    # smallest n with 2/2^n < alpha: 0.01 -> 2/256 = 0.0078 (2/128 = 0.0156 too big);
    # 0.05 -> 2/64 = 0.031; 0.0625 = 2/32 exactly, not below -> 6;
    # 0.001 -> 2/2048 = 0.00098 (2/1024 = 0.00195 too big) -> 11
    assert wilcoxon_min_pairs(alpha) == expected


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.001])
def test_wilcoxon_min_pairs_agrees_with_scipy_exact(alpha: float) -> None:
    n = wilcoxon_min_pairs(alpha)
    all_positive = np.arange(1.0, n + 1.0)
    assert stats.wilcoxon(all_positive, method="exact").pvalue < alpha
    assert stats.wilcoxon(all_positive[:-1], method="exact").pvalue >= alpha


def test_power_stays_defined_where_scipy_nct_overflows() -> None:
    """A duet's paired spread (~0.5%) makes the noncentrality large: scipy's nct gives nan
    there; the Abramowitz & Stegun 26.7.10 approximation takes over, close to the exact value
    where both exist."""
    powers = [paired_power(n, 0.0053, 0.03) for n in range(2, 9)]
    assert all(0.0 <= p <= 1.0 for p in powers), powers
    assert powers == sorted(powers)
    assert runs_needed(0.0053, 0.03) <= runs_needed(0.0053, 0.02)
    ncp = math.log1p(0.03) * math.sqrt(5) / 0.0053
    crit = float(stats.t.ppf(0.995, 4))
    approx = 1 - _nct_cdf_approx(crit, 4, ncp) + _nct_cdf_approx(-crit, 4, ncp)
    exact = float(stats.nct.sf(crit, 4, ncp))  # scipy still answers at n = 5
    assert abs(exact - approx) < 0.02, (exact, approx)
