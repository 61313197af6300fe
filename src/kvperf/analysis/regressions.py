"""Change points of stored history: one value per commit per series, judged per metric.

A *series* is one metric of one parameter set (command, data size, pipeline, …: the
results' KEY_FIELDS, never env). Its points are ordered by commit time, one per commit
(the mean of that commit's trials), and handed to E-Divisive means with the pooled t-test
(``analysis.changepoint.detect``, the Hunter/Otava method). Each change point found is then
judged by the verdict rule of every comparison (``analysis.verdict``): the segments before
and after it as two independent samples, at the detection's level (``max_pvalue``: the split
was searched for, not tested once) and the metric's minimum effect; only a regression or
improvement verdict becomes a ``Finding`` (a segment noisier than 10% CV is unstable, and
a step the ranks do not support is too). A finding has the commit range it lies in (last
commit of the old regime, first of the new), its magnitude (after/before − 1), the rule's
p-value and its direction (higher is better for throughput, lower for latency and CPU).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kvperf.analysis.changepoint import ChangePoint, Direction, classify, detect
from kvperf.analysis.verdict import (
    VERDICTS,
    Rows,
    Rule,
    Verdict,
    judge,
    lower_is_better,
    min_effect_for,
)
from kvperf.results.row import SeriesParams

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_METRICS = ("rps", "p50_latency_ms", "p99_latency_ms")  # `kvperf regressions`' default


@dataclass(frozen=True)
class CommitValue:
    """One point of a series: a commit, when it was made, and its value (mean over trials)."""

    sha: str
    at: datetime
    value: float
    trials: int = 1


@dataclass(frozen=True)
class Series:
    """One metric of one parameter set over commits, in commit order: parallel sequences of
    values (mean over the commit's trials), shas and commit times (arrays are fine)."""

    key: str
    params: SeriesParams
    metric: str
    values: Sequence[float] | npt.NDArray[np.float64]
    shas: Sequence[str] | npt.NDArray[Any]
    times: Sequence[datetime] | npt.NDArray[Any]

    def point(self, i: int) -> CommitValue:
        return CommitValue(str(self.shas[i]), self.times[i], float(self.values[i]))

    @classmethod
    def of(cls, key: str, params: SeriesParams, metric: str,
           points: Sequence[CommitValue]) -> Series:
        """From a list of points (small series, tests)."""
        return cls(key, params, metric, [p.value for p in points], [p.sha for p in points],
                   [p.at for p in points])


@dataclass(frozen=True)
class Finding:
    """A change point of a series, placed between two commits."""

    series_key: str
    params: SeriesParams
    metric: str
    direction: Direction
    magnitude: float
    pvalue: float
    before_mean: float
    after_mean: float
    last_before: CommitValue
    first_after: CommitValue

    @property
    def commit_range(self) -> str:
        """``last_before..first_after`` (short shas): the commits to bisect between."""
        return f"{self.last_before.sha[:12]}..{self.first_after.sha[:12]}"


@dataclass(frozen=True)
class Thresholds:
    """Significance and minimum size; ``min_magnitude`` None = the metric's minimum effect
    (2 % throughput, 5 % latency: ``analysis.verdict.min_effect_for``)."""

    max_pvalue: float = DEFAULT_MAX_PVALUE
    min_magnitude: float | None = None
    window: int | None = None

    def magnitude_for(self, metric: str) -> float:
        return self.min_magnitude if self.min_magnitude is not None else min_effect_for(metric)


def _finding(series: Series, cp: ChangePoint, pvalue: float) -> Finding:
    return Finding(
        series_key=series.key, params=series.params, metric=series.metric,
        direction=classify(cp, lower_is_better(series.metric)), magnitude=cp.magnitude,
        pvalue=pvalue, before_mean=cp.before_mean, after_mean=cp.after_mean,
        last_before=series.point(cp.index - 1), first_after=series.point(cp.index))


def _logs(values: npt.NDArray[np.float64], width: int) -> npt.NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(values > 0, np.log(values), np.nan)
    return np.concatenate([logs, np.full(width - values.size, np.nan)])[None, :]


def judge_step(before: npt.NDArray[np.float64], after: npt.NDArray[np.float64], metric: str,
               thresholds: Thresholds) -> tuple[Verdict, float]:
    """The verdict rule on the segments around a change point, and its p-value."""
    width = max(before.size, after.size)
    rows = Rows(np.array([thresholds.magnitude_for(metric)]),
                np.array([lower_is_better(metric)]), np.zeros(1, dtype=np.int64))
    j = judge(_logs(before, width), _logs(after, width), False, rows,
              Rule(alpha=thresholds.max_pvalue))
    return VERDICTS[int(j.verdict[0])], float(j.p[0])


def series_findings(series: Series, thresholds: Thresholds = Thresholds()) -> list[Finding]:
    """Change points of one series that the verdict rule flags, oldest first."""
    x = np.asarray(series.values, dtype=np.float64)
    points = detect(x, max_pvalue=thresholds.max_pvalue,
                    min_magnitude=thresholds.magnitude_for(series.metric),
                    window=thresholds.window)
    bounds = [0, *(cp.index for cp in points), x.size]
    found = []
    for k, cp in enumerate(points):
        verdict, pvalue = judge_step(x[bounds[k] : cp.index], x[cp.index : bounds[k + 2]],
                                     series.metric, thresholds)
        if verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            found.append(_finding(series, cp, pvalue))
    return found


def find_all(all_series: Iterable[Series], thresholds: Thresholds = Thresholds(),
             since: datetime | None = None) -> list[Finding]:
    """Change points of every series; with ``since``, only those whose first commit of the
    new regime is at or after it (the whole history is still used to detect them).
    Regressions first, then by size."""
    found = [f for s in all_series for f in series_findings(s, thresholds)
             if since is None or f.first_after.at >= since]
    return sorted(found, key=lambda f: (f.direction != "regression", -abs(f.magnitude),
                                        f.series_key, f.metric))
