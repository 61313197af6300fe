"""Comparing two result sets group by group: compare-results (independent runs) and compare /
run --commits / noise (interleaved rounds, paired).

Rows are grouped by their parameters (``KEY_FIELDS``) — never by ``env`` — so two files whose
rows differ only in provenance still pair every group. Each (group, metric) becomes one row of
the verdict rule (``analysis.verdict``): a ratio with its 95% CI, a t-test p-value, its
Benjamini–Hochberg adjustment across the comparison, and a verdict.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kvperf.analysis.effect import FloatArray, from_summaries
from kvperf.analysis.paired import RatioCI, cv
from kvperf.analysis.verdict import (
    DEFAULT_MIN_EFFECT,
    DEFAULT_RULE,
    Decision,
    Judgement,
    MinEffect,
    Rows,
    Rule,
    Verdict,
    decision,
    judge,
    judge_effect,
)
from kvperf.config.workload import WORKLOAD_KEYS
from kvperf.results.metrics import METRIC_SETS
from kvperf.results.row import KEY_FIELDS, Row, field_of, is_timed

GroupKey = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Stats:
    """One side's values of one metric in one group. It may hold none: a metric present only
    in a run the outlier screen dropped leaves its side nothing judged (mean NaN, n=0)."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else math.nan

    @property
    def sd(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else math.nan

    @property
    def cv(self) -> float:
        return cv(self.values)

    def text(self) -> str:
        """The seed's display: ``value (n=X, σ=Y, CV=Z%)``."""
        if self.n == 0:
            return "- (n=0)"
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
    side: str = ""  # N-server compare: the side judged against the baseline

    @property
    def change(self) -> float:
        return self.new.mean / self.base.mean - 1 if self.base.mean else math.nan


def group_key(row: Row) -> GroupKey:
    """The parameters that identify a row's series; absent fields count as None."""
    return tuple((f, _freeze(field_of(row, f))) for f in KEY_FIELDS)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def metric_value(row: Row, metric: str) -> float | None:
    """A metric of a row (``server.x`` reads nested fields); None when absent or not > 0."""
    value: Any = row
    for part in metric.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def group_rows(rows: Iterable[Row]) -> dict[GroupKey, list[Row]]:
    """Timed rows by group: ok and not profiled (seed files have no status: their rows count
    as ok; profiled rows are left out, perf sampling perturbs their timing)."""
    groups: dict[GroupKey, list[Row]] = {}
    for row in rows:
        if is_timed(row):
            groups.setdefault(group_key(row), []).append(row)
    return groups


Runs = list[Row]
Item = tuple[GroupKey, str, Runs, Runs]  # group, metric, A's runs, B's runs (paired: aligned)


def _logs(runs: Runs, metric: str, width: int) -> list[float]:
    """ln of a metric per run, NaN where absent, padded to ``width`` runs."""
    values = [metric_value(r, metric) for r in runs]
    return [math.log(v) if v is not None else math.nan for v in values] + \
        [math.nan] * (width - len(runs))


def _arrays(items: list[Item], metric_of: Callable[[str], str]
            ) -> tuple[FloatArray, FloatArray]:
    width = max(max(len(a), len(b)) for _, _, a, b in items)
    return (np.array([_logs(a, metric_of(m), width) for _, m, a, _ in items]),
            np.array([_logs(b, metric_of(m), width) for _, m, _, b in items]))


def _kept(runs: Runs, metric: str, judged: FloatArray) -> Stats:
    """The values the rule judged (outlier runs left out), as they were recorded."""
    values = (metric_value(r, metric) for r, log in zip(runs, judged, strict=False)
              if not math.isnan(log))
    return Stats(tuple(v for v in values if v is not None))


def _ratio_ci(j: Judgement, i: int) -> RatioCI:
    e = j.effect
    n = int(min(e.n_a[i], e.n_b[i]))
    method = "none" if n < 2 else "paired t" if e.paired else "t"
    low, high = (math.exp(float(x[i])) if n > 1 else math.nan for x in (j.low, j.high))
    return RatioCI(math.exp(float(e.estimate[i])), low, high, method, n, float(e.sd[i]))


def _memory(metric: str) -> bool:
    return metric.startswith("memory.")


def _judged(items: list[Item], paired: bool, rule: Rule, sides: list[str] | None = None,
            min_effect: MinEffect = DEFAULT_MIN_EFFECT) -> list[MetricComparison]:
    """The verdict rule over all items of one comparison (BH across them); outlier runs are
    found on each group's rps. ``sides`` (parallel to ``items``): the side each item judges
    against the baseline; the families of the two-stage correction are then (side, series),
    so an N-server comparison corrects for all N − 1 comparisons at once. A series' memory
    metrics are a family of their own (another measurement than its timing: their many
    unchanged values must not dilute a timing change's Simes p). ``min_effect``: the
    catalogue's minimum effects, or a caller's (bisect --min-effect)."""
    names = sides or [""] * len(items)
    kept = [(i, s) for i, s in zip(items, names, strict=True)
            if any(metric_value(r, i[1]) for r in i[2]) and any(metric_value(r, i[1])
                                                                 for r in i[3])]
    items, names = [i for i, _ in kept], [s for _, s in kept]
    if not items:
        return []
    la, lb = _arrays(items, lambda metric: metric)
    families = [(side, key, _memory(metric))
                for side, (key, metric, _, _) in zip(names, items, strict=True)]
    index = {f: n for n, f in enumerate(dict.fromkeys(families))}
    rows = Rows.of([metric for _, metric, _, _ in items], [index[f] for f in families],
                   min_effect)
    j = judge(la, lb, paired, rows, rule, primary=_arrays(items, lambda _: "rps"))
    return [MetricComparison(key, metric, _kept(a, metric, j.la[k]), _kept(b, metric, j.lb[k]),
                             _ratio_ci(j, k), float(j.p[k]), float(j.p_adjusted[k]),
                             _clock_mismatch(metric, a, b) or _sparse(metric, a, b)
                             or decision(j, k, rows, rule),
                             names[k])
            for k, (key, metric, a, b) in enumerate(items)]


# Metrics timed by the server's own clock (INFO server ``monotonic_clock``).
CLOCKED_METRICS = ("server.usec_per_call",)


def _clocks(runs: Runs) -> set[str]:
    server = (r.get("server") for r in runs)
    return {str(s["monotonic_clock"]) for s in server
            if isinstance(s, dict) and s.get("monotonic_clock")}


def _clock_mismatch(metric: str, a: Runs, b: Runs) -> Decision | None:
    """commandstats' usec_per_call is time on the server's clock: a POSIX clock_gettime
    server and an x86 TSC one do not measure the same thing, so their ratio is no verdict."""
    if metric not in CLOCKED_METRICS:
        return None
    clocks_a, clocks_b = _clocks(a), _clocks(b)
    if not clocks_a or not clocks_b or clocks_a == clocks_b:
        return None
    return Decision(Verdict.NOT_COMPARABLE, None,
                    f"server clocks differ: A {', '.join(sorted(clocks_a))}, "
                    f"B {', '.join(sorted(clocks_b))}", statistics=False)


def _sparse(metric: str, a: Runs, b: Runs) -> Decision | None:
    """A metric that only some of a side's measured runs have (RSS per key exists only when
    the seeding grew RSS by whole pages) is no series of runs: with it in 1 of 8 runs, the
    single-sample water line would judge one page's worth of noise."""
    counts = []
    for side, runs in (("A", a), ("B", b)):
        measured = sum(1 for r in runs if metric_value(r, "rps") is not None)
        present = sum(1 for r in runs if metric_value(r, metric) is not None)
        if measured > 1 and present * 2 < measured:
            counts.append(f"{side} {present} of {measured}")
    if not counts:
        return None
    return Decision(Verdict.INSUFFICIENT_DATA, None,
                    f"in too few runs to judge ({', '.join(counts)} measured runs)",
                    statistics=False)


def compare(base_rows: Runs, new_rows: Runs, metrics: str = "all", rule: Rule = DEFAULT_RULE
            ) -> tuple[list[MetricComparison], list[GroupKey]]:
    """All metric comparisons of groups present on both sides (their runs as independent
    samples), and the unmatched groups."""
    base, new = group_rows(base_rows), group_rows(new_rows)
    items = [(key, metric, base[key], new[key]) for key in base if key in new
             for metric in METRIC_SETS[metrics]]
    unmatched = [k for k in base if k not in new] + [k for k in new if k not in base]
    return _judged(items, paired=False, rule=rule), unmatched


Summary = tuple[int, float, float]  # n, mean, sample sd (NaN for n < 2) of one side


def compare_summaries(items: list[tuple[str, str, Summary, Summary]],
                      rule: Rule = DEFAULT_RULE) -> list[Decision]:
    """Verdicts from stored summaries (series, metric, A's and B's (n, mean, sd)): the rule
    without the runs themselves (``verdict.judge_effect``); families are the series."""
    if not items:
        return []
    columns = list(zip(*((*a, *b) for _, _, a, b in items), strict=True))
    na, ma, sa, nb, mb, sb = (np.array(c, dtype=np.float64) for c in columns)
    e = from_summaries(ma, sa, na.astype(np.int64), mb, sb, nb.astype(np.int64))
    series = list(dict.fromkeys(key for key, _, _, _ in items))
    rows = Rows.of([metric for _, metric, _, _ in items],
                   [series.index(key) for key, _, _, _ in items])
    j = judge_effect(e, rows, rule)
    return [decision(j, k, rows, rule) for k in range(len(items))]


def describe_group(key: GroupKey) -> str:
    """A short label: command and the non-default parameters."""
    fields = dict(key)
    parts = [str(fields.get("command"))]
    for name, short in (("data_size", "d"), ("pipeline", "P"), ("clients", "c"),
                        ("io_threads", "io")):
        if fields.get(name) is not None:
            parts.append(f"{short}={fields[name]}")
    parts += [flag for flag in ("cluster_mode", "tls") if fields.get(flag)]
    config_set = _config_set(fields.get("config_set"))
    if "client" in config_set:  # a client library's series (run --client): its label
        parts.append(f"{config_set['client']}:{config_set.get('concurrency')}")
    if "rate" in config_set:  # a rate sweep's point (results/row.py): each is a series
        parts.append(f"@ {config_set['rate']}")
    # key and value distributions (config/workload.py): each is a series of its own
    parts += [f"{k}={config_set[k]}" for k in WORKLOAD_KEYS if k in config_set]
    return " ".join(parts)


def _config_set(value: Any) -> dict[str, Any]:
    """A series' config_set as a mapping, as rows (a dict), group keys (pairs) or the store
    (canonical JSON text) hold it."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, tuple | list) and all(isinstance(p, tuple | list) and len(p) == 2
                                              for p in value):
        return dict(value)
    return {}


def pair_runs(a_rows: list[Row], b_rows: list[Row]
              ) -> dict[str, list[tuple[Row, Row]]]:
    """(A, B) row pairs per trial_id, matched by run number; failed or profiled rows drop
    their pair."""
    b_index = {(r["trial_id"], r["run"]): r for r in b_rows if is_timed(r)}
    pairs: dict[str, list[tuple[Row, Row]]] = {}
    for a in a_rows:
        b = b_index.get((a["trial_id"], a["run"]))
        if is_timed(a) and b is not None:
            pairs.setdefault(a["trial_id"], []).append((a, b))
    return pairs


def _paired_items(a_rows: Runs, b_rows: Runs, metrics: str) -> list[Item]:
    items: list[Item] = []
    for trial_pairs in pair_runs(a_rows, b_rows).values():
        key = group_key(trial_pairs[0][0])
        a, b = [p[0] for p in trial_pairs], [p[1] for p in trial_pairs]
        items += [(key, metric, a, b) for metric in METRIC_SETS[metrics]]
    return items


def compare_paired(a_rows: Runs, b_rows: Runs, metrics: str = "all",
                   rule: Rule = DEFAULT_RULE, min_effect: MinEffect = DEFAULT_MIN_EFFECT
                   ) -> list[MetricComparison]:
    """Interleaved A/B: rounds paired per trial series, one verdict per (series, metric)."""
    return _judged(_paired_items(a_rows, b_rows, metrics), paired=True, rule=rule,
                   min_effect=min_effect)


def compare_sides(rows: dict[str, Runs], metrics: str = "all", rule: Rule = DEFAULT_RULE,
                  paired: bool = True) -> list[MetricComparison]:
    """N sides against the first (the baseline): every other side's rows judged against the
    baseline's (paired by round when interleaved), all in one comparison — the families of
    the correction are (side, series), so the chance of any false flag stays ≤ α over all
    N − 1 comparisons. Each result names its side."""
    names = list(rows)
    base = rows[names[0]]
    items: list[Item] = []
    sides: list[str] = []
    for name in names[1:]:
        if paired:
            found = _paired_items(base, rows[name], metrics)
        else:
            a, b = group_rows(base), group_rows(rows[name])
            found = [(key, metric, a[key], b[key]) for key in a if key in b
                     for metric in METRIC_SETS[metrics]]
        items += found
        sides += [name] * len(found)
    return _judged(items, paired=paired, rule=rule, sides=sides)
