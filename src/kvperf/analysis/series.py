"""Summaries of repeated trials: one line per series (same trial_id) over its runs.

Throughput: median and CV over runs. Latency percentiles: from the histograms of all runs
merged (kvload), never an average of per-run percentiles; tools without histograms get the
median of their per-run percentiles, labelled as such.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from kvperf.analysis.paired import cv
from kvperf.config.workload import WORKLOAD_KEYS
from kvperf.results.histogram import HistogramFile, merged_latency
from kvperf.results.row import Row, is_timed


@dataclass(frozen=True)
class SeriesSummary:
    """One series over its ok runs."""

    trial_id: str
    command: str
    params: str
    runs: int
    rps_median: float
    rps_cv: float
    p50_ms: float
    p99_ms: float
    latency_source: str  # "merged histograms" | "median of runs"


def _params(row: Row) -> str:
    config_set = row.get("config_set") or {}
    rfr = config_set.get("read_from_replicas")
    shapes = "".join(f" {k}={v}" for k, v in config_set.items() if k in WORKLOAD_KEYS)
    return f"d={row['data_size']} P={row['pipeline']} c={row['clients']}" + (
        f" rfr={rfr}" if rfr else "") + shapes


def summarize(rows: list[Row],
              histograms: Callable[[Row], HistogramFile | None]
              ) -> list[SeriesSummary]:
    """Group timed rows (ok, not profiled) by trial_id (first-seen order); summarize each."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        if is_timed(row) and row.get("rps"):
            groups.setdefault(row["trial_id"], []).append(row)
    return [_summary(group, histograms) for group in groups.values()]


def _summary(group: list[Row],
             histograms: Callable[[Row], HistogramFile | None]) -> SeriesSummary:
    rps = [float(r.get("rps") or math.nan) for r in group]
    loaded = [histograms(r) for r in group]
    merged = merged_latency(loaded)
    if merged is not None:
        hist, scale, _ = merged
        p50, p99 = (hist.get_value_at_percentile(q) * scale for q in (50.0, 99.0))
        source = "merged histograms"
    else:
        p50 = statistics.median(float(r.get("p50_latency_ms") or math.nan) for r in group)
        p99 = statistics.median(float(r.get("p99_latency_ms") or math.nan) for r in group)
        source = "median of runs"
    first = group[0]
    return SeriesSummary(first["trial_id"], first["command"], _params(first), len(group),
                         statistics.median(rps), cv(rps), p50, p99, source)
