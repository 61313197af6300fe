"""Rank tests as a robustness check: a flagged change must also move the runs' ranks.

The t-test can be carried by one extreme run; a rank test cannot (Wilcoxon 1945,
"Individual comparisons by ranking methods"; Mann & Whitney 1947, "On a test of whether one
of two random variables is stochastically larger than the other"). The verdict rule uses the
rank test only to downgrade a flagged row to "unstable" when the ranks disagree: its p-value
is above ``LEVEL`` and above the smallest p-value the run counts allow (with 3 pairs every
ratio on the same side gives p = 0.25, the best possible: that agrees).

Both tests are exact up to ``EXACT_MAX`` runs (normal approximation with continuity
correction beyond), vectorised over rows (last axis: runs, NaN = absent): the null
distributions are counted once per run count (signed ranks: the coefficients of
∏ᵢ (1 + xⁱ); U: the Gaussian binomial recursion of Mann & Whitney) and looked up. Ties get
average ranks and the statistic is read conservatively (the far side of the tie); zero
differences are dropped (Wilcoxon's convention). Matches ``scipy.stats.wilcoxon`` and
``mannwhitneyu(method="exact")`` without ties.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import numpy.typing as npt

from kvperf.analysis import distributions

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

LEVEL = 0.05
EXACT_MAX = 40  # runs (pairs, or both sides together) up to which the null is counted exactly


def smallest_wilcoxon_p(pairs: int) -> float:
    """2 / 2^n: all n signed ranks on one side (exact two-sided signed-rank test)."""
    return min(1.0, math.ldexp(2.0, -pairs)) if pairs > 0 else math.nan


def smallest_mannwhitney_p(n_a: int, n_b: int) -> float:
    """2 / C(n_a + n_b, n_a): complete separation of the sides (exact two-sided U test)."""
    if not n_a or not n_b:
        return math.nan
    log_comb = math.lgamma(n_a + n_b + 1) - math.lgamma(n_a + 1) - math.lgamma(n_b + 1)
    return min(1.0, 2.0 * math.exp(-log_comb))


@cache
def _signed_rank_cdf(n: int) -> FloatArray:
    """P(W+ ≤ w), w = 0 … n(n+1)/2, for n pairs without ties."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for i in range(1, n + 1):
        counts[i:] = counts[i:] + counts[:-i].copy()
    cdf: FloatArray = np.cumsum(counts) / 2.0**n
    return cdf


@cache
def _u_cdf(n_a: int, n_b: int) -> FloatArray:
    """P(U ≤ u), u = 0 … n_a·n_b, U = #(b > a) for sides of n_a and n_b values."""
    rows = [np.ones(1) for _ in range(n_a + 1)]  # f(a, 0): U = 0 only
    for b in range(1, n_b + 1):
        new = [np.ones(1)]
        for a in range(1, n_a + 1):
            f = np.zeros(a * b + 1)
            # f(a, b)(u) = f(a − 1, b)(u − b) + f(a, b − 1)(u): the largest value is an a
            # (beating all b values) or a b (Mann & Whitney 1947; U' = #(a > b), same law)
            f[b:] += new[a - 1]
            f[: rows[a].size] += rows[a]
            new.append(f)
        rows = new
    counts = rows[n_a]
    cdf: FloatArray = np.cumsum(counts) / counts.sum()
    return cdf


def _two_sided(cdf: FloatArray, statistic: FloatArray) -> FloatArray:
    """2·min(P(S ≤ s), P(S ≥ s)) from a cdf over 0…max; ties read on the far side."""
    low = cdf[np.floor(statistic).astype(np.int64)]
    up_index = np.ceil(statistic).astype(np.int64) - 1
    high = 1.0 - np.where(up_index >= 0, cdf[np.maximum(up_index, 0)], 0.0)
    return np.minimum(1.0, 2.0 * np.minimum(low, high))


def _normal_p(statistic: FloatArray, mean: float, var: float) -> FloatArray:
    """Two-sided p from the normal approximation with continuity correction (larger runs)."""
    z = np.maximum(np.abs(statistic - mean) - 0.5, 0.0) / math.sqrt(var)
    return np.asarray(np.minimum(1.0, 2.0 * distributions.ndtr(-z)), dtype=np.float64)


def average_ranks(x: FloatArray) -> FloatArray:
    """Ranks along the last axis, ties given their average rank (``scipy.stats.rankdata``'s
    default): values below, plus half of the equal ones counting itself. Pairwise, so for the
    short rows of runs a verdict ranks."""
    below = np.sum(x[..., None, :] < x[..., :, None], axis=-1)
    equal = np.sum(x[..., None, :] == x[..., :, None], axis=-1)
    return np.asarray(below + (equal + 1) / 2.0, dtype=np.float64)


def _compact(x: FloatArray) -> tuple[FloatArray, IntArray]:
    """Values first, NaN last (order within a row is irrelevant to rank tests), and counts."""
    return np.sort(x, axis=-1), np.sum(~np.isnan(x), axis=-1).astype(np.int64)


def signed_rank_p(lr: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exact two-sided Wilcoxon signed-rank p per row of ``lr`` (rows, runs), and the
    smallest p each row's count allows."""
    values, n = _compact(np.where(lr == 0.0, np.nan, lr))
    p, floor = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    for k in np.unique(n[n > 0]):
        rows = n == k
        x = values[rows][:, :k]
        ranks = average_ranks(np.abs(x))
        w = np.sum(np.where(x > 0, ranks, 0.0), axis=-1)
        p[rows] = (_two_sided(_signed_rank_cdf(int(k)), w) if k <= EXACT_MAX else
                   _normal_p(w, k * (k + 1) / 4, k * (k + 1) * (2 * k + 1) / 24))
        floor[rows] = smallest_wilcoxon_p(int(k))
    return p, floor


def mann_whitney_p(la: FloatArray, lb: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exact two-sided Mann–Whitney p per row (rows, runs), and the smallest p allowed."""
    (a, na), (b, nb) = _compact(la), _compact(lb)
    p, floor = np.full(na.shape, np.nan), np.full(na.shape, np.nan)
    for ka, kb in {(int(x), int(y)) for x, y in zip(na, nb, strict=True) if x and y}:
        rows = (na == ka) & (nb == kb)
        x, y = a[rows][:, :ka, None], b[rows][:, None, :kb]
        u = np.sum((y > x) + 0.5 * (y == x), axis=(1, 2))
        p[rows] = (_two_sided(_u_cdf(ka, kb), u) if ka + kb <= EXACT_MAX else
                   _normal_p(u, ka * kb / 2, ka * kb * (ka + kb + 1) / 12))
        floor[rows] = smallest_mannwhitney_p(ka, kb)
    return p, floor


def ranks_agree(la: FloatArray, lb: FloatArray, paired: bool, rows: BoolArray) -> BoolArray:
    """For the ``rows`` selected (batch shape), whether the rank test agrees (see module doc);
    True elsewhere and where no rank test applies."""
    agree = np.ones(rows.shape, dtype=bool)
    if not rows.any() or la.shape[-1] == 0:  # nothing flagged, or no runs (summaries)
        return agree
    n = la.shape[-1]
    a, b = la[rows].reshape(-1, n), lb[rows].reshape(-1, n)
    p, floor = signed_rank_p(b - a) if paired else mann_whitney_p(a, b)
    with np.errstate(invalid="ignore"):
        agree[rows] = ~(p > np.fmax(LEVEL, floor) * (1 + 1e-9))  # floor: rounding of 2·(1 − cdf)
    return agree
