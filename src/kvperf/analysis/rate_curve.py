"""Rate sweeps read back from rows (pure but for the histogram loader passed in): per swept
series its latency-vs-throughput curve — each point's latency from the HDR histograms of
all its rounds merged (never averaged percentiles) — the knee of that curve, and each
round's own knee with their interval (analysis/knee.py); two sides' knees compared, paired
by round, through the one verdict rule."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kvperf.analysis.knee import CurvePoint, Knee, KneeInterval, find_knee, knee_interval
from kvperf.analysis.paired import RatioCI
from kvperf.analysis.verdict import DEFAULT_RULE, Decision, Rows, Rule, decision, judge
from kvperf.config.rate_sweep import Slo, parse_slo
from kvperf.plan.sweep import CONFIG_SET_KEY
from kvperf.results.histogram import HistogramFile, merged_runs, summary_ms
from kvperf.results.metrics import FAMILY_MIN_EFFECT
from kvperf.results.row import Row, is_timed
from kvperf.results.sweep import POINT, SATURATION, KneeRule

Histograms = Callable[[Row], HistogramFile | None]
KINDS = ("corrected", "service")
KEYS = ("mean", "p50", "p90", "p99", "p99_9", "max")


@dataclass(frozen=True)
class Curve:
    """One swept series: its saturation rps per round, its points (rounds merged), the
    knee of that curve, and each round's knee rps (None: below the lowest rate)."""

    series: str
    sweep_id: str
    saturation: tuple[float, ...]
    points: tuple[CurvePoint, ...]
    knee: Knee
    round_knees: tuple[float | None, ...]
    rule: KneeRule
    arrivals: str

    @property
    def knee_rps(self) -> float | None:
        point = self.knee.point(self.points)
        return point.achieved_rps if point else None

    @property
    def interval(self) -> KneeInterval | None:
        found = [k for k in self.round_knees if k is not None]
        return knee_interval(found) if found else None


def series_label(row: Row) -> str:
    """``SET d=3 P=1 c=50`` (+ config set entries but the point's step)."""
    parts = [str(row.get("command"))]
    for name, short in (("data_size", "d"), ("pipeline", "P"), ("clients", "c"),
                        ("io_threads", "io")):
        value: Any = row.get(name)
        if value is not None:
            parts.append(f"{short}={value}")
    extra = {k: v for k, v in (row.get("config_set") or {}).items() if k != CONFIG_SET_KEY}
    parts += [f"{k}={v}" for k, v in extra.items()]
    return " ".join(parts)


def _latency(rows: Sequence[Row], histograms: Histograms, kind: str) -> dict[str, float]:
    """A kind of latency of rows (one point's rounds) from their merged histograms, else
    (no histograms) their own figures averaged as the only fallback."""
    merged = merged_runs([histograms(r) for r in rows], kind)
    if merged is not None:
        hist, scale = merged
        summary = summary_ms(hist, "ms")
        return {k: summary[k] * scale for k in KEYS}
    figures: list[Any] = [((r.get("client") or {}).get("latency_ms") or {}).get(kind) or {}
                          for r in rows]
    return {k: statistics.fmean(float(f.get(k) or 0.0) for f in figures) for k in KEYS}


def curve_point(rows: Sequence[Row], histograms: Histograms) -> CurvePoint:
    """One point from its rounds' rows."""
    first = rows[0]["sweep"]
    return CurvePoint(
        label=str(first.get("point")),
        target_rps=statistics.fmean(float(r["sweep"].get("target_rps") or 0.0) for r in rows),
        achieved_rps=statistics.fmean(float(r.get("rps") or 0.0) for r in rows),
        corrected=_latency(rows, histograms, "corrected"),
        service=_latency(rows, histograms, "service"),
        percent=first.get("percent"), runs=len(rows),
        client_saturated=any(bool(r.get("client_saturated")) for r in rows))


def _points(rows: Iterable[Row], histograms: Histograms) -> tuple[CurvePoint, ...]:
    by_index: dict[int, list[Row]] = {}
    for row in rows:
        by_index.setdefault(int(row["sweep"].get("index", 0)), []).append(row)
    return tuple(curve_point(by_index[i], histograms) for i in sorted(by_index))


def _slo(rule: KneeRule) -> Slo | None:
    text = rule.get("slo")
    return parse_slo(text) if text else None


def _knee(points: Sequence[CurvePoint], saturation: float | None, rule: KneeRule) -> Knee:
    return find_knee(points, saturation, _slo(rule), float(rule.get("factor") or 2.0))


def _round_knee(rows: list[Row], saturation: float | None, rule: KneeRule,
                histograms: Histograms) -> float | None:
    points = _points(rows, histograms)
    if not points:
        return None
    point = _knee(points, saturation, rule).point(points)
    return point.achieved_rps if point else None


def curves(rows: Iterable[Row], histograms: Histograms) -> list[Curve]:
    """Every swept series of a side's rows, in the order they first appear."""
    swept: dict[str, list[Row]] = {}
    for row in rows:
        if row.get("sweep") and is_timed(row):
            swept.setdefault(row["sweep"]["id"], []).append(row)
    return [c for c in (_curve(i, g, histograms) for i, g in swept.items()) if c]


def _curve(sweep_id: str, rows: list[Row], histograms: Histograms) -> Curve | None:
    saturations = {r["run"]: float(r.get("rps") or 0.0) for r in rows
                   if r["sweep"].get("role") == SATURATION}
    points = [r for r in rows if r["sweep"].get("role") == POINT]
    if not points:
        return None
    record = points[0]["sweep"]
    rule: KneeRule = record.get("rule") or {"slo": None, "factor": 2.0}
    saturation = statistics.fmean(saturations.values()) if saturations else None
    merged = _points(points, histograms)
    runs = sorted({r["run"] for r in points})
    round_knees = tuple(
        _round_knee([r for r in points if r["run"] == run], saturations.get(run), rule,
                    histograms) for run in runs)
    label = series_label(next((r for r in rows if r["sweep"].get("role") == SATURATION),
                              points[0]))
    return Curve(label, sweep_id, tuple(saturations[k] for k in sorted(saturations)),
                 merged, _knee(merged, saturation, rule), round_knees, rule,
                 str(record.get("arrivals") or "uniform"))


# The knee's rps is judged like a throughput: higher is better, 2% minimum effect.
KNEE_METRIC = "knee_rps"
KNEE_ROWS = Rows(np.array([FAMILY_MIN_EFFECT["throughput"]]), np.array([False]),
                 np.array([0], dtype=np.int64))


@dataclass(frozen=True)
class KneeComparison:
    """One swept series on two sides: each side's curve, the ratio of their knee rps (B/A,
    paired by round) with its interval, and the verdict rule's decision on it."""

    series: str
    base: Curve
    new: Curve
    ratio: RatioCI
    decision: Decision


def _knee_logs(curve: Curve, width: int) -> list[float]:
    values = [math.log(k) if k else math.nan for k in curve.round_knees]
    return values + [math.nan] * (width - len(values))


def compare_knees(base: Sequence[Curve], new: Sequence[Curve], rule: Rule = DEFAULT_RULE,
                  paired: bool = True) -> list[KneeComparison]:
    """Each series swept on both sides: its rounds' knee rps, paired by round (sides of one
    interleaved run) or as independent runs, through the one verdict rule."""
    by_id = {c.sweep_id: c for c in new}
    out = []
    for a in base:
        b = by_id.get(a.sweep_id)
        if b is None:
            continue
        width = max(len(a.round_knees), len(b.round_knees))
        la = np.array([_knee_logs(a, width)])
        lb = np.array([_knee_logs(b, width)])
        judged = judge(la, lb, paired, KNEE_ROWS, rule)
        e = judged.effect
        n = int(min(e.n_a[0], e.n_b[0]))
        low, high = ((math.exp(float(x[0])) if n > 1 else math.nan)
                     for x in (judged.low, judged.high))
        method = ("paired t" if paired else "t") if n > 1 else "none"
        ratio = RatioCI(math.exp(float(e.estimate[0])), low, high, method, n, float(e.sd[0]))
        out.append(KneeComparison(a.series, a, b, ratio, decision(judged, 0, KNEE_ROWS, rule)))
    return out
