"""Sample-size (power) analysis: how many benchmark runs detect a given effect.

Effects are relative (0.05 = 5 %) and analysed on the log scale, δ = ln(1 + effect),
matching the log-ratio statistics of ``paired``. Tests are two-sided at level α.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import stats

MIN_RUNS = 2
_MAX_REFINE_STEPS = 100_000


def _log_effect(effect: float) -> float:
    if not effect > -1.0 or effect == 0.0 or not math.isfinite(effect):
        raise ValueError(f"effect must be finite, non-zero and > -1, got {effect}")
    return abs(math.log1p(effect))


def _check_levels(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")


def _z_sum(alpha: float, power: float) -> float:
    return float(stats.norm.ppf(1.0 - alpha / 2) + stats.norm.ppf(power))


def t_test_power(df: int, ncp: float, alpha: float) -> float:
    """Power of a two-sided t-test with ``df`` degrees of freedom and noncentrality ``ncp``.

    1 - F_nct(t_{1-α/2,df}; df, ncp) + F_nct(-t_{1-α/2,df}; df, ncp)
    (Cohen 1988, "Statistical Power Analysis for the Behavioral Sciences", ch. 2;
    the noncentral-t form used by R's ``power.t.test(strict=TRUE)``).
    """
    crit = float(stats.t.ppf(1.0 - alpha / 2, df))
    upper = float(stats.nct.sf(crit, df, ncp))
    lower = float(stats.nct.cdf(-crit, df, ncp))
    if math.isnan(upper) or math.isnan(lower):  # scipy's nct gives nan for large ncp
        upper = 1.0 - _nct_cdf_approx(crit, df, ncp)
        lower = _nct_cdf_approx(-crit, df, ncp)
    return upper + lower


def _nct_cdf_approx(t: float, df: int, ncp: float) -> float:
    """P(T' ≤ t) for the noncentral t, by Abramowitz & Stegun 26.7.10:
    Φ((t(1 − 1/(4ν)) − δ) / √(1 + t²/(2ν))); good where the exact form overflows."""
    return float(stats.norm.cdf((t * (1 - 1 / (4 * df)) - ncp) / math.sqrt(1 + t * t / (2 * df))))


def paired_power(n: int, sd_log_ratio: float, effect: float, alpha: float = 0.01) -> float:
    """Power of the paired t-test on n log ratios: df = n-1, ncp = δ·√n / sd."""
    return t_test_power(n - 1, _log_effect(effect) * math.sqrt(n) / sd_log_ratio, alpha)


def unpaired_power(n: int, sd_log: float, effect: float, alpha: float = 0.01) -> float:
    """Power of the two-sample t-test with n per side: df = 2n-2, ncp = δ / (sd·√(2/n))."""
    return t_test_power(2 * n - 2, _log_effect(effect) / (sd_log * math.sqrt(2.0 / n)), alpha)


def runs_needed(
    sd_log_ratio: float, effect: float, alpha: float = 0.01, power: float = 0.90
) -> int:
    """Pairs needed for a paired two-sided t-test to detect ``effect``.

    Start from the normal approximation n₀ = ((z_{1-α/2} + z_{power}) · sd / δ)²
    (Chow, Shao & Wang, "Sample Size Calculations in Clinical Research", §3.2.1),
    then step n upward until the noncentral-t power (``paired_power``) reaches
    ``power``. Never less than 2. sd = 0 needs only the minimum.
    """
    _check_levels(alpha, power)
    delta = _log_effect(effect)
    if not sd_log_ratio >= 0.0 or not math.isfinite(sd_log_ratio):
        raise ValueError(f"sd_log_ratio must be finite and >= 0, got {sd_log_ratio}")
    if sd_log_ratio == 0.0:
        return MIN_RUNS
    n0 = (_z_sum(alpha, power) * sd_log_ratio / delta) ** 2
    start = max(MIN_RUNS, math.floor(n0))
    return _refine(start, lambda n: paired_power(n, sd_log_ratio, effect, alpha), power)


def runs_needed_unpaired(cv: float, effect: float, alpha: float = 0.01, power: float = 0.90) -> int:
    """Runs per side needed for an unpaired two-sided t-test on log values.

    For a log-normal metric with coefficient of variation cv, sd(ln X) =
    √(ln(1 + cv²)) (Johnson, Kotz & Balakrishnan, "Continuous Univariate
    Distributions" vol. 1, ch. 14). Normal approximation per side
    n₀ = 2 · ((z_{1-α/2} + z_{power}) · sd / δ)² (Chow, Shao & Wang §3.2.1), refined
    upward with the noncentral t (``unpaired_power``). Never less than 2.
    """
    _check_levels(alpha, power)
    delta = _log_effect(effect)
    if not cv >= 0.0 or not math.isfinite(cv):
        raise ValueError(f"cv must be finite and >= 0, got {cv}")
    if cv == 0.0:
        return MIN_RUNS
    sd = math.sqrt(math.log1p(cv * cv))
    n0 = 2.0 * (_z_sum(alpha, power) * sd / delta) ** 2
    start = max(MIN_RUNS, math.floor(n0))
    return _refine(start, lambda n: unpaired_power(n, sd, effect, alpha), power)


def _refine(start: int, power_at: Callable[[int], float], target: float) -> int:
    n = start
    for _ in range(_MAX_REFINE_STEPS):
        if power_at(n) >= target:
            return n
        n += 1
    raise ArithmeticError(f"power {target} not reached within {_MAX_REFINE_STEPS} steps")


def wilcoxon_min_pairs(alpha: float) -> int:
    """Smallest number of pairs for which the exact two-sided Wilcoxon signed-rank
    test can give p < alpha.

    The most extreme outcome (all differences of one sign) has exact two-sided
    p = 2 · 2^-n (Wilcoxon 1945; Hollander & Wolfe, "Nonparametric Statistical
    Methods", §3.1), so n must satisfy 2^(1-n) < alpha: n = ⌊log2(2/α)⌋ + 1.
    For α = 0.01 this is 8 (2/2^7 = 0.0156 is still ≥ 0.01).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n = max(1, math.floor(math.log2(2.0 / alpha)) + 1)
    while 2.0 ** (1 - n) >= alpha:
        n += 1
    return n
