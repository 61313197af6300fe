"""Unstable series: those whose A/A noise exceeds their minimum effect (pure).

A change smaller than the noise between two measurements of the same code cannot be acted
on, so such a series' change points are left out of `kvperf regressions`' list (and of
alerts) unless asked — Conbench keeps its "unstable benchmarks" apart the same way.

The noise of a series is the spread a comparison of two commits shows when nothing changed:
the robust standard deviation (1.4826 × the median absolute deviation, a normal's σ) of the
log ratio between consecutive commits of one regime — no change point between them, so the
steps `kvperf regressions` found do not count as noise. An A/A run that measured the series
(`kvperf noise`: its paired standard deviation of the log ratio, ``measured_noise``) is used
instead when given (``measured``): measured beats inferred. A series with fewer than
``MIN_PAIRS`` such consecutive pairs has no noise estimate and is never unstable. The
minimum effect is the one change points are held to (``Thresholds.magnitude_for``: 2%
throughput, 5% latency, or --min-magnitude)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kvperf.analysis.comparison import compare_paired, group_key
from kvperf.analysis.regressions import Finding, Series, Thresholds
from kvperf.results.row import Row, SeriesParams, series_key

MIN_PAIRS = 5
MAD_TO_SD = 1.4826  # σ of a normal = 1.4826 × its median absolute deviation
HISTORY, NOISE_RUN = "history", "noise run"


@dataclass(frozen=True)
class Unstable:
    """A series whose noise exceeds its minimum effect, with both and where the noise came
    from (``history``: ``pairs`` consecutive commits; ``noise run``: an A/A run)."""

    series_key: str
    params: SeriesParams
    metric: str
    noise: float  # sd of the log ratio of two measurements of the same code
    min_effect: float
    source: str
    pairs: int


def commit_noise(values: Sequence[float] | npt.NDArray[np.float64],
                 breaks: Iterable[int] = ()) -> tuple[float, int]:
    """The robust sd of the log ratio between consecutive values that no break separates
    (a break at i: a change point between values i − 1 and i), and how many pairs it used;
    NaN when fewer than MIN_PAIRS pairs."""
    x = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        diffs = np.diff(np.where(x > 0, np.log(x), np.nan))
    keep = np.isfinite(diffs)
    for i in breaks:
        if 1 <= i <= diffs.size:
            keep[i - 1] = False
    kept = diffs[keep]
    if kept.size < MIN_PAIRS:
        return float("nan"), int(kept.size)
    mad = float(np.median(np.abs(kept - np.median(kept))))
    return MAD_TO_SD * mad, int(kept.size)


def unstable_series(series: Iterable[Series], findings: Iterable[Finding] = (),
                    thresholds: Thresholds | None = None,
                    measured: Mapping[tuple[str, str], float] | None = None
                    ) -> list[Unstable]:
    """The series (one metric of one parameter set over commits) whose noise exceeds their
    minimum effect, noisiest first. ``findings``: the change points found in them (their
    steps are not noise); ``measured``: (series key, metric) → an A/A run's sd of the log
    ratio."""
    breaks: dict[tuple[str, str], list[str]] = {}  # the first commit of each new regime
    for f in findings:
        breaks.setdefault((f.series_key, f.metric), []).append(f.first_after.sha)
    out = []
    for s in series:
        key = (s.key, s.metric)
        shas = [str(x) for x in s.shas]
        at = [shas.index(sha) for sha in breaks.get(key, []) if sha in shas]
        noise, pairs = commit_noise(s.values, at)
        source = HISTORY
        if measured is not None and key in measured:
            noise, source = measured[key], NOISE_RUN
        effect = (thresholds or Thresholds()).magnitude_for(s.metric)
        if np.isfinite(noise) and noise > effect:
            out.append(Unstable(s.key, s.params, s.metric, noise, effect, source, pairs))
    return sorted(out, key=lambda u: (-u.noise / u.min_effect, u.series_key, u.metric))


def measured_noise(a_rows: Sequence[Row], b_rows: Sequence[Row]
                   ) -> dict[tuple[str, str], float]:
    """An A/A run's noise (`kvperf noise`'s sides A and B of one server, interleaved): per
    (series key, metric) the paired standard deviation of the log ratio B/A over its rounds
    (``analysis.paired``'s ``sd_log``), for ``unstable_series``' ``measured``."""
    keys = {group_key(r): series_key(r) for r in a_rows}
    return {(keys[c.group], c.metric): c.ci.sd_log
            for c in compare_paired(list(a_rows), list(b_rows), "all")
            if c.group in keys and math.isfinite(c.ci.sd_log)}


def unstable_keys(found: Iterable[Unstable]) -> set[tuple[str, str]]:
    """(series key, metric) of each unstable series: what alerts and listings leave out."""
    return {(u.series_key, u.metric) for u in found}
