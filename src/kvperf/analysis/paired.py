"""A/B comparison of paired benchmark rounds.

Round ``i`` of build A is paired with round ``i`` of build B (same machine state,
interleaved in time), so the natural per-pair quantity is the log ratio
``ln(b_i / a_i)``. All ratios are B/A: ``ratio > 1`` means B's value is larger.
Whether larger is better is the caller's business (see ``verdict.lower_is_better``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]
Values = Sequence[float] | FloatArray
CIMethod = Literal["t", "bootstrap", "auto"]

BOOTSTRAP_RESAMPLES = 10_000
SKEW_LIMIT = 1.0
MIN_T_PAIRS = 6
_BOOTSTRAP_CHUNK = 1_000


@dataclass(frozen=True)
class RatioCI:
    """Geometric-mean ratio B/A with a confidence interval.

    ``method`` is the method actually used: ``"t"``, ``"bootstrap"`` or ``"none"``
    (n = 1, no interval). ``sd_log`` is the sample standard deviation (ddof=1) of
    the paired log ratios; it feeds the power analysis (nan when n < 2).
    """

    ratio: float
    low: float
    high: float
    method: str
    n: int
    sd_log: float = math.nan


def _as_1d(values: Values, name: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr


def log_ratios(a: Values, b: Values) -> FloatArray:
    """Per-pair log ratios ``ln(b_i / a_i)``.

    Raises ValueError when the lengths differ or any value is non-positive or
    non-finite (a ratio of such values is meaningless).
    """
    xa, xb = _as_1d(a, "a"), _as_1d(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"length mismatch: {xa.size} A values vs {xb.size} B values")
    for name, arr in (("a", xa), ("b", xb)):
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
            raise ValueError(f"{name} must contain only finite positive values")
    return np.log(xb) - np.log(xa)


def sample_skewness(x: FloatArray) -> float:
    """Adjusted Fisher-Pearson sample skewness G1 (nan for n < 3, 0 for constant data).

    G1 = sqrt(n(n-1))/(n-2) * m3 / m2^1.5 (Joanes & Gill 1998, "Comparing measures
    of sample skewness and kurtosis"; ``scipy.stats.skew(bias=False)``).
    """
    if x.size < 3:
        return math.nan
    if float(np.ptp(x)) == 0.0:
        return 0.0
    return float(stats.skew(x, bias=False))


def _choose_method(lr: FloatArray, method: CIMethod) -> str:
    if method not in ("t", "bootstrap", "auto"):
        raise ValueError(f"unknown CI method {method!r}")
    if method != "auto":
        return method
    skewed = lr.size >= 3 and abs(sample_skewness(lr)) > SKEW_LIMIT
    return "bootstrap" if lr.size < MIN_T_PAIRS or skewed else "t"


def t_interval(lr: FloatArray, confidence: float) -> tuple[float, float]:
    """Student-t interval for the mean of the log ratios.

    mean ± t_{(1+c)/2, n-1} · s/√n (any statistics text, e.g. Montgomery & Runger,
    "Applied Statistics and Probability for Engineers", §8.2; equals
    ``scipy.stats.ttest_1samp(lr, 0).confidence_interval(c)``).
    """
    mean = float(np.mean(lr))
    half = (
        float(stats.t.ppf(0.5 + confidence / 2, lr.size - 1))
        * float(np.std(lr, ddof=1))
        / math.sqrt(lr.size)
    )
    return mean - half, mean + half


def bootstrap_interval(lr: FloatArray, confidence: float, seed: int) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of the log ratios.

    10,000 resamples with replacement (seeded ``numpy.random.default_rng``); the
    interval is the (1-c)/2 and (1+c)/2 quantiles of the resampled means (Efron &
    Tibshirani 1993, "An Introduction to the Bootstrap", §13.3). Resamples are
    drawn in chunks so memory stays O(chunk · n).
    """
    rng = np.random.default_rng(seed)
    means = np.empty(BOOTSTRAP_RESAMPLES, dtype=np.float64)
    for lo in range(0, BOOTSTRAP_RESAMPLES, _BOOTSTRAP_CHUNK):
        hi = min(lo + _BOOTSTRAP_CHUNK, BOOTSTRAP_RESAMPLES)
        idx = rng.integers(0, lr.size, size=(hi - lo, lr.size))
        means[lo:hi] = lr[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def geomean_ratio_ci(
    a: Values,
    b: Values,
    confidence: float = 0.95,
    method: CIMethod = "auto",
    seed: int = 0,
) -> RatioCI:
    """Geometric-mean ratio B/A = exp(mean(ln(b_i/a_i))) with a confidence interval.

    The interval is computed on the log scale and exponentiated (Fleming &
    Wallace 1986, "How not to lie with statistics: the correct way to summarize
    benchmark results"). ``method="auto"`` uses the percentile bootstrap when
    n < 6 or the log ratios are skewed (|G1| > 1, n ≥ 3), else Student t.
    n = 1 gives the point ratio with a (nan, nan) interval and method "none".
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    lr = log_ratios(a, b)
    chosen = _choose_method(lr, method)
    ratio = math.exp(float(np.mean(lr)))
    if lr.size == 1:
        return RatioCI(ratio, math.nan, math.nan, "none", 1)
    if float(np.ptp(lr)) == 0.0:
        return RatioCI(ratio, ratio, ratio, chosen, lr.size, 0.0)
    sd = float(np.std(lr, ddof=1))
    if chosen == "t":
        low, high = t_interval(lr, confidence)
    else:
        low, high = bootstrap_interval(lr, confidence, seed)
    return RatioCI(ratio, math.exp(low), math.exp(high), chosen, lr.size, sd)


def wilcoxon_p(a: Values, b: Values) -> float:
    """Two-sided Wilcoxon signed-rank p-value on the paired log ratios.

    Wilcoxon 1945, "Individual comparisons by ranking methods"; computed by
    ``scipy.stats.wilcoxon`` (exact null distribution for n ≤ 50 without ties or
    zeros, zeros dropped per Wilcox). All-zero differences give p = 1.0.
    The smallest attainable exact two-sided p with n pairs is 2/2^n, so p < 0.01
    needs n ≥ 8 (see ``power.wilcoxon_min_pairs``).
    """
    lr = log_ratios(a, b)
    if not np.any(lr != 0.0):
        return 1.0
    return float(stats.wilcoxon(lr, alternative="two-sided").pvalue)


def mannwhitney_p(a: Values, b: Values) -> float:
    """Two-sided Mann-Whitney U p-value for unpaired samples A and B.

    Mann & Whitney 1947, "On a test of whether one of two random variables is
    stochastically larger than the other"; computed by ``scipy.stats.mannwhitneyu``
    (exact for small samples without ties, else normal approximation).
    """
    xa, xb = _as_1d(a, "a"), _as_1d(b, "b")
    return float(stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)


def cv(values: Values) -> float:
    """Coefficient of variation s/|mean| as a fraction (sample std, ddof=1).

    Everitt & Skrondal, "The Cambridge Dictionary of Statistics", s.v.
    coefficient of variation. n < 2 or mean 0 gives nan.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        return math.nan
    mean = float(np.mean(arr))
    if mean == 0.0:
        return math.nan
    return float(np.std(arr, ddof=1)) / abs(mean)
