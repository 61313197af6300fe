"""Judging instruction counts between two sides, with the verdict rule of every comparison.

Instruction counts of the same binary repeat to ~0.01%, so a handful of runs decide. They are
judged by ``analysis.verdict`` like timings: the two-sample t-test on log counts (unpaired:
counts do not follow the machine's speed, so pairing by round would cancel nothing and halve
the degrees of freedom), the two-stage correction across series, the minimum effect (default
0.5%) and, with one run per side or identical counts in every run of both sides (no spread
to judge by), that minimum effect as the water line ("no statistics"): any change beyond it
is flagged. More instructions is worse.

``moved_functions`` ranks functions by how much their inclusive cost per request moved. A
slowed function moves every caller's inclusive cost by the same amount (plus the callers' own
noise: the event loop's cost per request varies with how requests batch into wakeups), so
among functions whose move is at least ``BAND`` (half) of the largest one, the one with the
smallest inclusive cost — the most specific, nearest the change — comes first. Rows keep
only the top functions, so a function listed in some runs of a side but not in others sits
at the cut and is left out; one absent from every run of a side counts as 0 there (new, or
gone).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kvperf.analysis.comparison import GroupKey, group_rows
from kvperf.analysis.verdict import Judgement, Rows, Rule, Verdict, decision, judge
from kvperf.results.metrics import FAMILY_MIN_EFFECT, INSTRUCTION_METRICS
from kvperf.results.row import Row

DEFAULT_MIN_EFFECT = FAMILY_MIN_EFFECT["instructions"]
SPREAD_FACTOR = 5.0
TOP_MOVED = 10
BAND = 0.5
METRICS = tuple(m.name for m in INSTRUCTION_METRICS)


@dataclass(frozen=True)
class InstructionDecision:
    """The verdict, the change of means and the larger side's relative range (fractions,
    0.01 = 1%), the minimum effect it was judged against, the rule's reason, the runs per
    side that would settle an inconclusive one, and the 95% t interval of the change
    (geometric-mean ratio − 1; NaN with fewer than two runs on a side)."""

    verdict: Verdict
    change: float
    spread: float
    threshold: float
    reason: str = ""
    statistics: bool = True
    runs_needed: int | None = None
    low: float = math.nan
    high: float = math.nan

    @property
    def flagged(self) -> bool:
        return self.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)


def relative_spread(values: Sequence[float]) -> float:
    """(max − min) / mean of one side's runs; NaN with fewer than two runs."""
    if len(values) < 2:
        return math.nan
    mean = statistics.fmean(values)
    return (max(values) - min(values)) / mean if mean else math.nan


def relative_change(base: Sequence[float], new: Sequence[float]) -> float:
    """mean(new) / mean(base) − 1 (NaN when a side is empty or the base mean is 0)."""
    if not base or not new or not statistics.fmean(base):
        return math.nan
    return statistics.fmean(new) / statistics.fmean(base) - 1


@dataclass(frozen=True)
class MovedFunction:
    """One function's mean inclusive cost per request on each side."""

    name: str
    base: float
    new: float

    @property
    def delta(self) -> float:
        return self.new - self.base

    @property
    def change(self) -> float:
        return self.new / self.base - 1 if self.base else math.inf


def _side_values(tops: Sequence[dict[str, float]]) -> dict[str, tuple[float, ...] | None]:
    """Each listed function's values over a side's runs; None when at the cut (some runs)."""
    names = {name for top in tops for name in top}
    return {n: tuple(top[n] for top in tops) if all(n in top for top in tops) else None
            for n in names}


def _beyond_noise(base: tuple[float, ...], new: tuple[float, ...], factor: float) -> bool:
    """The move exceeds ``factor`` × the function's own within-side spread (when known)."""
    spread = max(relative_spread(base), relative_spread(new))
    change = relative_change(base, new)
    return math.isnan(spread) or math.isnan(change) or abs(change) > factor * spread


def moved_functions(base_tops: Sequence[dict[str, float]], new_tops: Sequence[dict[str, float]],
                    count: int = TOP_MOVED, band: float = BAND,
                    factor: float = SPREAD_FACTOR) -> list[MovedFunction]:
    """The ``count`` functions whose inclusive cost per request moved most (see module doc).

    A function absent from every run of a side counts as 0 there; one listed in only some
    runs of a side is at the cut of the stored top list and is left out, and so is one whose
    move is within ``factor`` × its own spread between a side's runs (time-driven work such
    as serverCron's, whose cost per request follows the wall clock).
    """
    base, new = _side_values(base_tops), _side_values(new_tops)
    moved = []
    for name in base.keys() | new.keys():
        b, n = base.get(name, ()), new.get(name, ())
        if b is None or n is None or not _beyond_noise(b, n, factor):
            continue
        mean_b, mean_n = (statistics.fmean(v) if v else 0.0 for v in (b, n))
        if mean_b != mean_n:
            moved.append(MovedFunction(name, mean_b, mean_n))
    moved.sort(key=lambda m: (-abs(m.delta), m.name))
    ranked: list[MovedFunction] = []
    while moved:
        leader = abs(moved[0].delta)
        members = [m for m in moved if abs(m.delta) >= band * leader]
        ranked += sorted(members, key=lambda m: (max(m.base, m.new), m.name))
        moved = moved[len(members):]
    return ranked[:count]


@dataclass(frozen=True)
class InstructionMetric:
    """One metric of one series on both sides, and its decision."""

    metric: str
    label: str
    base: tuple[float, ...]
    new: tuple[float, ...]
    decision: InstructionDecision


@dataclass(frozen=True)
class SeriesInstructions:
    """One series (command and parameters): its metrics and the functions that moved."""

    group: GroupKey
    metrics: list[InstructionMetric]
    moved: list[MovedFunction]

    @property
    def flagged(self) -> bool:
        return any(m.decision.flagged for m in self.metrics)


def _values(rows: list[Row], field: str) -> tuple[float, ...]:
    out = []
    for row in rows:
        value = (row.get("instructions") or {}).get(field)
        if isinstance(value, int | float):
            out.append(float(value))
    return tuple(out)


def _label(metric: str, rows: list[Row]) -> str:
    if metric == "total_per_request":
        return "instructions/request"
    functions = {(r.get("instructions") or {}).get("function") for r in rows}
    names = sorted(f for f in functions if f)
    return f"{'/'.join(names) or 'command'} inclusive/call"


def _metrics(key: GroupKey, base: list[Row], new: list[Row]
             ) -> list[tuple[str, str, tuple[float, ...], tuple[float, ...]]]:
    """(metric, label, base values, new values) of a series' metrics counted on both sides."""
    labelled = ((m, _label(m, base + new), _values(base, m), _values(new, m)) for m in METRICS)
    return [(metric, label, b, n) for metric, label, b, n in labelled if b and n]


def _decisions(found: list[tuple[GroupKey, str, tuple[float, ...], tuple[float, ...]]],
               min_effect: float) -> list[InstructionDecision]:
    """The verdict rule over every metric of every series at once (unpaired, see above)."""
    if not found:
        return []
    width = max(max(len(b), len(n)) for _, _, b, n in found)
    la, lb = (np.log(np.array([list(v) + [math.nan] * (width - len(v)) for v in side]))
              for side in ([b for _, _, b, _ in found], [n for _, _, _, n in found]))
    groups = list(dict.fromkeys(key for key, _, _, _ in found))
    rows = Rows(np.full(len(found), min_effect), np.ones(len(found), dtype=bool),
                np.array([groups.index(key) for key, _, _, _ in found], dtype=np.int64))
    rule = Rule(water_line=min_effect, constant_runs=2)  # counts repeat by design, not chance
    j = judge(la, lb, False, rows, rule)
    out = []
    for k, (_, _, b, n) in enumerate(found):
        d = decision(j, k, rows, rule)
        spread = max(relative_spread(b), relative_spread(n))
        low, high = _interval(j, k)
        out.append(InstructionDecision(d.verdict, relative_change(b, n), spread, min_effect,
                                       d.reason, d.statistics, d.runs_needed, low, high))
    return out


def _interval(j: Judgement, k: int) -> tuple[float, float]:
    """The change's 95% interval (NaN with fewer than two runs on a side)."""
    if min(int(j.effect.n_a[k]), int(j.effect.n_b[k])) < 2:
        return math.nan, math.nan
    return math.expm1(float(j.low[k])), math.expm1(float(j.high[k]))


def compare_instructions(base_rows: list[Row], new_rows: list[Row],
                         min_effect: float = DEFAULT_MIN_EFFECT,
                         factor: float = SPREAD_FACTOR) -> list[SeriesInstructions]:
    """Every series present on both sides with instruction counts, in base order; ``factor``
    bounds the moved functions' own noise (``moved_functions``)."""
    base, new = group_rows(base_rows), group_rows(new_rows)
    per_series = {k: found for k in base if k in new
                  if (found := _metrics(k, base[k], new[k]))}
    decisions = iter(_decisions([(k, m, b, n) for k, found in per_series.items()
                                 for m, _, b, n in found], min_effect))
    results = []
    for k, found in per_series.items():
        metrics = [InstructionMetric(m, label, b, n, next(decisions))
                   for m, label, b, n in found]
        tops = [[{f: v for f, v in ((r.get("instructions") or {}).get("top_functions")
                                    or {}).items() if v is not None} for r in side]
                for side in (base[k], new[k])]
        results.append(SeriesInstructions(k, metrics, moved_functions(tops[0], tops[1],
                                                                      factor=factor)))
    return results
