"""Comparing two result sets row group by row group (compare-results).

Rows are grouped by their parameters (``KEY_FIELDS``) — never by ``env`` — so two files whose
rows differ only in provenance still pair every group. Each (group, metric) gets a ratio with a
CI, a Mann–Whitney p-value, a Benjamini–Hochberg adjustment across all rows, and a verdict.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kvperf.analysis.multiple import benjamini_hochberg
from kvperf.analysis.paired import RatioCI, cv, geomean_ratio_ci, mannwhitney_p, wilcoxon_p
from kvperf.analysis.unpaired import welch_ratio_ci
from kvperf.analysis.verdict import Decision, decide, lower_is_better, min_effect_for
from kvperf.results.row import KEY_FIELDS, LATENCY_FIELDS

GroupKey = tuple[tuple[str, Any], ...]
METRIC_SETS = {"rps": ("rps",), "latency": LATENCY_FIELDS,
               "all": ("rps", *LATENCY_FIELDS, "server.cpu_us_per_request",
                       "server.usec_per_call", "client.client_cpu_us_per_request")}


@dataclass(frozen=True)
class Stats:
    """One side's values of one metric in one group."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sd(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else math.nan

    @property
    def cv(self) -> float:
        return cv(self.values)

    def text(self) -> str:
        """The seed's display: ``value (n=X, σ=Y, CV=Z%)``."""
        if self.n < 2:
            return f"{self.mean:,.3f} (n=1)"
        return f"{self.mean:,.3f} (n={self.n}, σ={self.sd:,.3f}, CV={self.cv:.1%})"


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one group: both sides, the ratio, p-values and the verdict."""

    group: GroupKey
    metric: str
    base: Stats
    new: Stats
    ci: RatioCI
    p: float
    p_adjusted: float
    decision: Decision

    @property
    def change(self) -> float:
        return self.new.mean / self.base.mean - 1 if self.base.mean else math.nan


def group_key(row: dict[str, Any]) -> GroupKey:
    """The parameters that identify a row's series; absent fields count as None."""
    return tuple((f, _freeze(row.get(f))) for f in KEY_FIELDS)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def metric_value(row: dict[str, Any], metric: str) -> float | None:
    """A metric of a row (``server.x`` reads nested fields); None when absent or not > 0."""
    value: Any = row
    for part in metric.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def group_rows(rows: Iterable[dict[str, Any]]) -> dict[GroupKey, list[dict[str, Any]]]:
    """Ok rows by group (seed files have no status: their rows count as ok)."""
    groups: dict[GroupKey, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("status", "ok") == "ok":
            groups.setdefault(group_key(row), []).append(row)
    return groups


def _values(rows: list[dict[str, Any]], metric: str) -> tuple[float, ...]:
    return tuple(v for r in rows if (v := metric_value(r, metric)) is not None)


def _p_value(base: Stats, new: Stats) -> float:
    return mannwhitney_p(base.values, new.values) if base.n > 1 and new.n > 1 else math.nan


def _decision(metric: str, ci: RatioCI, p_adjusted: float, base: Stats, new: Stats,
              paired: bool) -> Decision:
    """Unpaired rows are as noisy as their noisier side; paired rows as their B/A ratios."""
    p = 1.0 if math.isnan(p_adjusted) else p_adjusted
    if paired:
        ratios = [b / a for a, b in zip(base.values, new.values, strict=True)]
        noise, label = cv(ratios), "paired B/A ratio CV"
    else:
        noise, label = max(base.cv, new.cv), "run-to-run CV"
    return decide(ci, p, noise, min_effect_for(metric), lower_is_better(metric),
                  cv_label=label)


def compare(base_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]],
            metrics: str = "all") -> tuple[list[MetricComparison], list[GroupKey]]:
    """All metric comparisons of groups present on both sides, and the unmatched groups."""
    base, new = group_rows(base_rows), group_rows(new_rows)
    pairs = [(key, metric, Stats(_values(base[key], metric)), Stats(_values(new[key], metric)))
             for key in base if key in new for metric in METRIC_SETS[metrics]]
    pairs = [p for p in pairs if p[2].n and p[3].n]
    cis = [welch_ratio_ci(b.values, n.values) for _, _, b, n in pairs]
    pvalues = [_p_value(b, n) for _, _, b, n in pairs]
    adjusted = benjamini_hochberg(pvalues)
    results = [MetricComparison(key, metric, b, n, ci, p, pa,
                                _decision(metric, ci, pa, b, n, paired=False))
               for (key, metric, b, n), ci, p, pa in zip(pairs, cis, pvalues, adjusted,
                                                          strict=True)]
    unmatched = [k for k in base if k not in new] + [k for k in new if k not in base]
    return results, unmatched


def describe_group(key: GroupKey) -> str:
    """A short label: command and the non-default parameters."""
    fields = dict(key)
    parts = [str(fields.get("command"))]
    for name, short in (("data_size", "d"), ("pipeline", "P"), ("clients", "c"),
                        ("io_threads", "io")):
        if fields.get(name) is not None:
            parts.append(f"{short}={fields[name]}")
    parts += [flag for flag in ("cluster_mode", "tls") if fields.get(flag)]
    return " ".join(parts)


def pair_runs(a_rows: list[dict[str, Any]], b_rows: list[dict[str, Any]]
              ) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """(A, B) row pairs per trial_id, matched by run number; failed rows drop their pair."""
    b_index = {(r["trial_id"], r["run"]): r for r in b_rows if r.get("status") == "ok"}
    pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for a in a_rows:
        b = b_index.get((a["trial_id"], a["run"]))
        if a.get("status") == "ok" and b is not None:
            pairs.setdefault(a["trial_id"], []).append((a, b))
    return pairs


def _paired_values(pairs: list[tuple[dict[str, Any], dict[str, Any]]],
                   metric: str) -> tuple[Stats, Stats]:
    kept = [(va, vb) for a, b in pairs
            if (va := metric_value(a, metric)) is not None
            and (vb := metric_value(b, metric)) is not None]
    return Stats(tuple(v for v, _ in kept)), Stats(tuple(v for _, v in kept))


def compare_paired(a_rows: list[dict[str, Any]], b_rows: list[dict[str, Any]],
                   metrics: str = "all") -> list[MetricComparison]:
    """Interleaved A/B: paired log ratios per trial series, Wilcoxon + BH, verdicts."""
    items = []
    for trial_pairs in pair_runs(a_rows, b_rows).values():
        key = group_key(trial_pairs[0][0])
        for metric in METRIC_SETS[metrics]:
            a, b = _paired_values(trial_pairs, metric)
            if a.n:
                items.append((key, metric, a, b))
    cis = [geomean_ratio_ci(a.values, b.values) for _, _, a, b in items]
    pvalues = [wilcoxon_p(a.values, b.values) if a.n > 1 else math.nan for _, _, a, b in items]
    adjusted = benjamini_hochberg(pvalues)
    return [MetricComparison(key, metric, a, b, ci, p, pa,
                             _decision(metric, ci, pa, a, b, paired=True))
            for (key, metric, a, b), ci, p, pa in zip(items, cis, pvalues, adjusted,
                                                       strict=True)]
