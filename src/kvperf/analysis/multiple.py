"""Multiple-comparison correction across the metrics of one A/B comparison."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in input order.

    Benjamini & Hochberg 1995, "Controlling the false discovery rate: a practical
    and powerful approach to multiple testing", JRSS B 57(1):289-300. With the m
    finite p-values sorted ascending p_(1) ≤ … ≤ p_(m), the adjusted value is
    q_(i) = min_{j ≥ i} min(1, m · p_(j) / j) (step-up, hence monotone in p).
    nan inputs pass through as nan and do not count towards m. Matches
    ``scipy.stats.false_discovery_control(p, method="bh")`` on finite input.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("pvalues must be a flat sequence")
    valid = ~np.isnan(p)
    if np.any((p[valid] < 0.0) | (p[valid] > 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, math.nan)
    m = int(np.count_nonzero(valid))
    if m == 0:
        return [math.nan] * p.size
    order = np.argsort(p[valid], kind="stable")
    scaled = p[valid][order] * m / np.arange(1, m + 1)
    monotone = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(monotone, 1.0)
    out[valid] = adjusted
    return [float(v) for v in out]
