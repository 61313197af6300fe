"""Outlier runs: a run stalled by the machine (3× slower, say) is dropped before judging.

A stall hits every metric of its run, so the runs to drop are found once per series, on its
steadiest metric (rps: the primary one), and dropped from every metric of that series. A
metric's own spread never drops its runs: dropping the most extreme values of a noisy metric
would make it look steady and its t-test overconfident (the calibration harness measured
0.4 percentage points more A/A false flags when max latency dropped its own extremes).

A run is an outlier when it is off its side's median (for paired rounds: the round's log
ratio off the median log ratio) by more than a factor ``FACTOR`` — beyond 4 σ for any metric
stable enough to judge (CV ≤ 10%) — and at most one run in five is (more is no outlier but a
noisy series, left for the stability rule). Fewer than ``MIN_RUNS`` runs: nothing dropped (no
reliable median). This is the median rule of Hampel (1974, "The influence curve and its role
in robust estimation", JASA 69:383–393) with a fixed scale instead of the MAD, which at five
runs is too unsteady to judge by.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

FACTOR = 1.5
MIN_RUNS = 5


def outlier_runs(logs: FloatArray) -> BoolArray:
    """Which runs (last axis, NaN = absent) are outliers of their row (see the module doc)."""
    n = np.sum(~np.isnan(logs), axis=-1, keepdims=True)
    if logs.shape[-1] == 0:
        return np.zeros(logs.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        median = np.nanmedian(np.where(n > 0, logs, 0.0), axis=-1, keepdims=True)
        off = np.abs(logs - median) > math.log(FACTOR)
    allowed = (n >= MIN_RUNS) & (np.sum(off, axis=-1, keepdims=True) <= n // 5)
    flagged: BoolArray = off & allowed
    return flagged


def screen(la: FloatArray, lb: FloatArray, primary_a: FloatArray, primary_b: FloatArray,
           paired: bool) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64]]:
    """Rows with their series' outlier runs set to NaN, and how many runs (pairs, when
    paired) each row lost. ``primary_a``/``primary_b``: the series' primary metric (log
    values) broadcast to the rows' shape; paired rounds are judged and dropped as pairs."""
    if paired:
        drop_a = drop_b = outlier_runs(primary_b - primary_a)
        dropped = np.sum(drop_a & ~np.isnan(lb - la), axis=-1)
    else:
        drop_a, drop_b = outlier_runs(primary_a), outlier_runs(primary_b)
        dropped = np.sum(drop_a & ~np.isnan(la), axis=-1) + np.sum(drop_b & ~np.isnan(lb),
                                                                   axis=-1)
    return np.where(drop_a, np.nan, la), np.where(drop_b, np.nan, lb), dropped.astype(np.int64)
