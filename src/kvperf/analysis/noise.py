"""An A/A run in numbers: per series and metric, each side's CV, the paired spread, and the
interleaved rounds the verdict rule needs to flag a given change (`kvperf noise`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kvperf.analysis.comparison import GroupKey, MetricComparison
from kvperf.analysis.power import runs_to_flag
from kvperf.analysis.verdict import DEFAULT_ALPHA, min_effect_for

FLAG_EFFECTS = (0.03, 0.10)


@dataclass(frozen=True)
class NoiseRow:
    """One metric of one series; ``runs_for`` per effect of FLAG_EFFECTS (None: the
    effect is below the metric's minimum effect, the rule would never flag it)."""

    comparison: MetricComparison
    sd_log: float
    runs_for: tuple[int | None, ...]


def _levels(results: list[MetricComparison]) -> dict[GroupKey, float]:
    """α × (rows of the series) / (rows): BH's level for a row when its whole series moves."""
    sizes = Counter(c.group for c in results)
    return {group: DEFAULT_ALPHA * size / len(results) for group, size in sizes.items()}


def noise_rows(results: list[MetricComparison],
               effects: tuple[float, ...] = FLAG_EFFECTS) -> list[NoiseRow]:
    levels = _levels(results)
    return [NoiseRow(c, c.ci.sd_log,
                     tuple(runs_to_flag(e, c.ci.sd_log, min_effect_for(c.metric),
                                        levels[c.group], paired=True) for e in effects))
            for c in results]
