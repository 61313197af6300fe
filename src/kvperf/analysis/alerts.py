"""What an alert's report and its resolution judge (pure): a stored change point's step with
its confidence interval, and whether a fixed alert's later commits are back.

The step is the verdict rule's unpaired effect (analysis/verdict.py ``judge``) of the
history's per-commit means of the two regimes around the range (``regimes``: the commits up
to its last one, and from its first new one on, each as long as its values stay nearer their
own regime's stored mean than the other's — a later fix or an earlier step ends it): the
change ``after/before − 1`` and its CI at the rule's confidence.

A fixed alert is checked against the commits measured after the change's first new commit:
the mean of the newest ``LATEST`` of them must be within the metric's minimum effect
(``min_effect_for``: 2 % throughput, 5 % latency — the margin every verdict calls "no
change") of the mean before the change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kvperf.analysis.verdict import Rows, judge, lower_is_better, min_effect_for

LATEST = 3  # the newest commits after the change a fix is judged on


@dataclass(frozen=True)
class Step:
    """A series' change across the range: after/before − 1 and its CI (fractions); NaN
    bounds when a side holds fewer than two commits."""

    change: float
    low: float
    high: float
    before_commits: int
    after_commits: int


def step(before: Sequence[float], after: Sequence[float], metric: str) -> Step:
    """The change from the commits before to those after, with the rule's CI."""
    a, b = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    if a.size == 0 or b.size == 0 or np.any(a <= 0) or np.any(b <= 0):
        nan = float("nan")
        return Step(nan, nan, nan, int(a.size), int(b.size))
    width = max(a.size, b.size)

    def logs(x: np.ndarray) -> np.ndarray:
        return np.concatenate([np.log(x), np.full(width - x.size, np.nan)])[None, :]

    rows = Rows(np.array([min_effect_for(metric)]), np.array([lower_is_better(metric)]),
                np.zeros(1, dtype=np.int64))
    j = judge(logs(a), logs(b), False, rows)
    change = float(b.mean() / a.mean() - 1)
    return Step(change, float(np.expm1(j.low[0])), float(np.expm1(j.high[0])), int(a.size),
                int(b.size))


def regimes(values: Sequence[float], at: int, before_mean: float, after_mean: float
            ) -> tuple[list[float], list[float]]:
    """The values of the regime before index ``at`` and of the one from it (module doc)."""
    def near(x: float, own: float, other: float) -> bool:
        return abs(x - own) <= abs(x - other)

    before: list[float] = []
    for x in reversed(values[:at]):
        if not near(x, before_mean, after_mean):
            break
        before.insert(0, x)
    after: list[float] = []
    for x in values[at:]:
        if not near(x, after_mean, before_mean):
            break
        after.append(x)
    return before, after


@dataclass(frozen=True)
class FixCheck:
    """A fixed alert's check: the newest commits after the change, their mean against the
    mean before it, and the margin; ``back`` when within it."""

    metric: str
    commits: int
    latest_mean: float
    before_mean: float
    margin: float

    @property
    def change(self) -> float:
        return self.latest_mean / self.before_mean - 1 if self.before_mean else float("nan")

    @property
    def back(self) -> bool:
        return self.commits > 0 and abs(self.change) <= self.margin + 1e-12


def fix_check(metric: str, before_mean: float, later: Sequence[float]) -> FixCheck:
    """Judge the newest ``LATEST`` values of ``later`` (commit order) against
    ``before_mean`` (module doc)."""
    newest = list(later)[-LATEST:]
    mean = float(np.mean(newest)) if newest else float("nan")
    return FixCheck(metric, len(newest), mean, before_mean, min_effect_for(metric))
