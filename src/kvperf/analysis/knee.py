"""The knee of a latency-vs-throughput curve (pure): the highest rate a server sustains
before its tail latency turns.

The rule, exactly (docs/guide/sweeps.md, "Rate sweeps"):

1. The points are taken lowest target rps first. Latency is the corrected one (from each
   request's intended send time, so queueing in front of the server counts).
2. A point *holds* when it sustained its rate — achieved rps at least ``SUSTAINED`` (90%)
   of its target — and its latency is within the bound:
   - with an SLO (``--slo p99<=1ms``): that percentile within the bound;
   - without: p99 at most ``factor`` (default 2) × the *baseline*, the lowest p99 among
     the points at or below ``BASELINE_SHARE`` (30%) of the saturation rps (none there,
     or no saturation known: the first point's p99).
3. A point that does not hold *breaks*; a break is *confirmed* when the next point breaks
   too, or it is the last point (one noisy point between two that hold is not the knee).
4. The knee is the last point before the first confirmed break. No confirmed break: the
   knee is the top point and is *not reached* (it lies beyond the ladder). The first point
   a confirmed break: no knee (below the lowest rate).

Across rounds every round's curve has its own knee; ``knee_interval`` gives their geometric
mean with a 95% t interval on logs (each round's ladder is placed by its own saturation rps).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from kvperf.analysis.distributions import stdtrit
from kvperf.config.rate_sweep import Slo

SUSTAINED = 0.9
BASELINE_SHARE = 0.3
METRIC_KEYS = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.9": "p99_9"}


@dataclass(frozen=True)
class CurvePoint:
    """One point of a curve: its step, target and achieved rps, latency percentiles in ms
    (``p50``, ``p90``, ``p99``, ``p99_9``, ``mean``) of both kinds."""

    label: str
    target_rps: float
    achieved_rps: float
    corrected: dict[str, float]
    service: dict[str, float]
    percent: float | None = None
    runs: int = 1
    client_saturated: bool = False  # the load tool used ≥ 90% of its CPU in some run


@dataclass(frozen=True)
class Knee:
    """The knee by the rule above: ``index`` into the points (None: below the lowest rate),
    ``reached`` False when no point broke, the bound that judged, and why."""

    index: int | None
    reached: bool
    bound_ms: float
    metric: str
    reason: str
    breaks: tuple[bool, ...]

    def point(self, points: Sequence[CurvePoint]) -> CurvePoint | None:
        return points[self.index] if self.index is not None else None


def baseline_ms(points: Sequence[CurvePoint], saturation: float | None) -> float:
    """The lowest p99 (corrected) of the low-rate points (rule 2)."""
    low = [p for p in points
           if saturation and p.target_rps <= BASELINE_SHARE * saturation * 1.0001]
    chosen = low or list(points[:1])
    return min(p.corrected["p99"] for p in chosen)


def _holds(p: CurvePoint, metric: str, bound: float, slo: Slo | None) -> bool:
    if p.achieved_rps < SUSTAINED * p.target_rps:
        return False
    value = p.corrected[METRIC_KEYS[metric]]
    return slo.holds(value) if slo else value <= bound


def find_knee(points: Sequence[CurvePoint], saturation: float | None,
              slo: Slo | None = None, factor: float = 2.0) -> Knee:
    """The knee of ``points`` (lowest target first) by the module's rule."""
    if not points:
        raise ValueError("a curve without points has no knee")
    if slo is not None:
        metric, bound = slo.metric, slo.bound_ms
        judged = f"{slo.text()} (corrected)"
    else:
        base = baseline_ms(points, saturation)
        metric, bound = "p99", factor * base
        judged = f"p99 ≤ {factor:g} × {base:.3f} ms baseline = {bound:.3f} ms (corrected)"
    breaks = tuple(not _holds(p, metric, bound, slo) for p in points)
    for i, broke in enumerate(breaks):
        confirmed = broke and (i + 1 == len(breaks) or breaks[i + 1])
        if confirmed:
            why = _why(points[i], metric, bound)
            if i == 0:
                return Knee(None, True, bound, metric,
                            f"the lowest rate already breaks {judged}: {why}", breaks)
            return Knee(i - 1, True, bound, metric,
                        f"{points[i].label} breaks {judged}: {why}", breaks)
    return Knee(len(points) - 1, False, bound, metric,
                f"every point holds {judged}: the knee is beyond the top rate", breaks)


def _why(p: CurvePoint, metric: str, bound: float) -> str:
    if p.achieved_rps < SUSTAINED * p.target_rps:
        return (f"achieved {p.achieved_rps:,.0f} of {p.target_rps:,.0f} rps "
                f"(< {SUSTAINED:.0%})")
    return f"{metric} {p.corrected[METRIC_KEYS[metric]]:.3f} ms > {bound:.3f} ms"


@dataclass(frozen=True)
class KneeInterval:
    """Knee rps over rounds: geometric mean and its 95% t interval on logs (NaN with one
    round), as the verdict rule treats throughputs."""

    values: tuple[float, ...]
    mean: float
    low: float
    high: float


def knee_interval(values: Sequence[float]) -> KneeInterval:
    """Geometric mean of the rounds' knee rps with a 95% t interval on the log scale."""
    if not values or min(values) <= 0:
        raise ValueError("knees must be positive rates")
    logs = [math.log(v) for v in values]
    mean = statistics.fmean(logs)
    if len(values) < 2:
        return KneeInterval(tuple(values), math.exp(mean), math.nan, math.nan)
    half = (float(stdtrit(len(values) - 1, 0.975)) * statistics.stdev(logs)
            / math.sqrt(len(values)))
    return KneeInterval(tuple(values), math.exp(mean), math.exp(mean - half),
                        math.exp(mean + half))
