"""What a comparison row shows: the ratio B/A with its interval, and a side's CV.

All ratios are B/A: ``ratio > 1`` means B's value is larger. Whether larger is better is
the caller's business (see ``verdict.lower_is_better``). The statistics behind them live in
``effect`` (t on logs), ``ranks`` (the rank check) and ``verdict`` (the rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Values = Sequence[float] | FloatArray


@dataclass(frozen=True)
class RatioCI:
    """Geometric-mean ratio B/A with a confidence interval.

    ``method``: ``"paired t"`` (log ratios of interleaved rounds), ``"t"`` (two-sample t on
    logs) or ``"none"`` (one value on a side: no interval). ``sd_log``: the per-run standard
    deviation on the log scale the power analysis scales (nan when unknown).
    """

    ratio: float
    low: float
    high: float
    method: str
    n: int
    sd_log: float = math.nan


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
