"""Comparison of two independent samples (runs of A and runs of B not interleaved).

Used by compare-results on two metrics.json files: their runs were not paired in time.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from kvperf.analysis.paired import RatioCI, Values


def welch_ratio_ci(a: Values, b: Values, confidence: float = 0.95) -> RatioCI:
    """Ratio of geometric means B/A with a Welch t interval on the log scale.

    Welch 1947, "The generalization of 'Student's' problem when several different population
    variances are involved"; degrees of freedom by the Welch–Satterthwaite equation. The
    interval for mean(ln b) − mean(ln a) is exponentiated. ``n`` is the smaller sample size and
    ``sd_log`` the pooled-by-average log standard deviation (for a rough power estimate).
    """
    la, lb = np.log(np.asarray(a, dtype=float)), np.log(np.asarray(b, dtype=float))
    if not (np.all(np.isfinite(la)) and np.all(np.isfinite(lb))):
        raise ValueError("values must be positive and finite")
    diff = float(np.mean(lb) - np.mean(la))
    n = int(min(la.size, lb.size))
    if la.size < 2 or lb.size < 2:
        return RatioCI(math.exp(diff), math.nan, math.nan, "none", n)
    va, vb = float(np.var(la, ddof=1)) / la.size, float(np.var(lb, ddof=1)) / lb.size
    se = math.sqrt(va + vb)
    sd_log = math.sqrt((float(np.var(la, ddof=1)) + float(np.var(lb, ddof=1))) / 2)
    if se == 0.0:
        return RatioCI(math.exp(diff), math.exp(diff), math.exp(diff), "welch", n, 0.0)
    dof = (va + vb) ** 2 / (va**2 / (la.size - 1) + vb**2 / (lb.size - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    return RatioCI(math.exp(diff), math.exp(diff - half), math.exp(diff + half), "welch", n,
                   sd_log)
