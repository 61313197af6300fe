"""`kvperf bisect`'s decisions, pure: which series and metric, what a step's verdict means,
which commit to test next, and when the search is over.

Commits are indexed along ``git rev-list --first-parent`` from GOOD (0) to BAD (last). GOOD
is good by definition; BAD is bad once the first step (GOOD vs BAD) flagged the series'
metric — the direction of that flag (regression or improvement) is what later steps look
for. Each step compares GOOD with one commit, interleaved, by the verdict rule of compare:

- flagged in the same direction → bad; no change, or flagged the other way → good;
- a timing step's no change and its flags use the metric's minimum effect (latency 5%,
  throughput 2%) or bisect's ``--min-effect`` (``effects``' ``min_effect``);
- inconclusive or unstable → more runs (up to the budget), then skipped; a timing step
  that may look again is judged at α divided by the looks its budget allows
  (``sequential.budget_rule``: the correction of ``compare --runs auto``), and so adds at
  most ``--runs`` at a time, looking after each batch (``more_runs``);
- insufficient data or not comparable (trials failed), or no build → skipped.

The next commit is the untested one nearest the midpoint of the last good and the first
bad commit, rounded down (⌊(good + bad) / 2⌋: of good..good+3 the first between them; the
later one when two are equally near it), skipping skipped ones as ``git bisect skip`` does.
The search ends when no untested commit lies between them: the first bad commit is known
when they are adjacent, else it is one of the skipped commits or the first bad one (a range).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from kvperf.analysis.comparison import GroupKey, compare_paired, describe_group
from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT, compare_instructions
from kvperf.analysis.verdict import DEFAULT_RULE, MinEffect, Rule, Verdict
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.results.metrics import INSTRUCTION_METRICS, METRIC_SETS
from kvperf.results.row import ParamValue, Row

INSTRUCTION_PREFIX = "instructions."
TIMING_METRICS = METRIC_SETS["all"]
COUNTED_METRICS = tuple(INSTRUCTION_PREFIX + m.name for m in INSTRUCTION_METRICS)
DEFAULT_METRIC = {Measure.TIMING: "rps", Measure.INSTRUCTIONS: COUNTED_METRICS[0]}
DEFAULT_RUNS = {Measure.TIMING: 5, Measure.INSTRUCTIONS: 2}


class Mark(StrEnum):
    """What a step made of its commit."""

    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"


# ---------------------------------------------------------------- series and metric

# describe_group's short names, and the row fields they stand for
SERIES_KEYS = {"d": "data_size", "P": "pipeline", "c": "clients", "io": "io_threads"}
SERIES_FLAGS = ("cluster_mode", "tls")


@dataclass(frozen=True)
class SeriesFilter:
    """``--series "SET P=16"``: a command and some of its parameters (describe_group's)."""

    command: str
    params: tuple[tuple[str, int], ...] = ()
    flags: tuple[str, ...] = ()

    def matches(self, key: GroupKey) -> bool:
        fields = dict(key)
        if str(fields.get("command", "")).upper() != self.command.upper():
            return False
        return all(fields.get(f) == v for f, v in self.params) and \
            all(fields.get(f) for f in self.flags)


def parse_series(text: str) -> SeriesFilter:
    """``COMMAND key=value…`` (keys d, P, c, io or their row names; flags cluster_mode,
    tls); a mistake → UsageError naming it."""
    words = text.split()
    if not words or "=" in words[0]:
        raise UsageError(f"--series {text!r}: expected 'COMMAND key=value…', e.g. 'SET P=16'")
    names = {**SERIES_KEYS, **{v: v for v in SERIES_KEYS.values()}}
    params, flags = [], []
    for word in words[1:]:
        name, _, value = word.partition("=")
        if not value and name in SERIES_FLAGS:
            flags.append(name)
        elif name in names and re.fullmatch(r"\d+", value):
            params.append((names[name], int(value)))
        else:
            known = ", ".join([*SERIES_KEYS, *SERIES_FLAGS])
            raise UsageError(f"--series {text!r}: {word!r} is not key=number with a key of "
                             f"{known}")
    return SeriesFilter(words[0], tuple(params), tuple(flags))


def pick_series(text: str | None, available: Sequence[GroupKey]) -> GroupKey:
    """The one series of the plan ``--series`` names (required with more than one)."""
    names = ", ".join(repr(describe_group(k)) for k in available)
    if text is None:
        if len(available) == 1:
            return available[0]
        raise UsageError(f"the plan has {len(available)} series: name one with --series "
                         f"(one of {names})")
    found = [k for k in available if parse_series(text).matches(k)]
    if len(found) != 1:
        what = "no series" if not found else f"{len(found)} series"
        raise UsageError(f"--series {text!r} matches {what} of the plan; available: {names}")
    return found[0]


def check_metric(metric: str | None, measure: Measure) -> str:
    """The metric to bisect on (``--metric``, else the measure's default), spelled as a row
    path like the metric catalogue (``rps``, ``instructions.total_per_request``)."""
    names = COUNTED_METRICS if measure == Measure.INSTRUCTIONS else TIMING_METRICS
    if metric is None:
        return DEFAULT_METRIC[measure]
    if metric not in names:
        raise UsageError(f"--metric {metric!r} is not measured with --measure {measure}; "
                         f"choose one of {', '.join(names)}")
    return metric


# ---------------------------------------------------------------- a step's judgement


@dataclass(frozen=True)
class SeriesEffect:
    """One series' metric at one step: verdict, change (fraction) and its 95% interval
    (NaN when there is none), the rule's reason, runs needed (inconclusive), runs judged."""

    series: str
    verdict: Verdict
    change: float
    low: float
    high: float
    reason: str
    runs_needed: int | None
    runs: int


def _timing_effects(a: list[Row], b: list[Row], metric: str, rule: Rule,
                    min_effect: float | None) -> list[SeriesEffect]:
    given = MinEffect() if min_effect is None else MinEffect(min_effect, min_effect)
    return [SeriesEffect(describe_group(c.group), c.decision.verdict, c.ci.ratio - 1,
                         c.ci.low - 1, c.ci.high - 1, c.decision.reason,
                         c.decision.runs_needed, min(c.base.n, c.new.n))
            for c in compare_paired(a, b, "all", rule, given) if c.metric == metric]


def effects(a: list[Row], b: list[Row], measure: Measure, metric: str,
            min_effect: float | None = None, rule: Rule = DEFAULT_RULE
            ) -> list[SeriesEffect]:
    """Every series' ``metric``, B (the tested commit) vs A (GOOD), judged as compare
    judges it (paired timing, at ``rule``'s level: ``sequential.budget_rule`` for a step
    that may look again; unpaired instruction counts). ``min_effect`` (a fraction; None:
    the default, instruction mode's 0.5%, each timing metric's catalogue value): the
    smallest change flagged, and the margin of "no change" in timing."""
    if measure != Measure.INSTRUCTIONS:
        return _timing_effects(a, b, metric, rule, min_effect)
    out = []
    for series in compare_instructions(
            a, b, DEFAULT_MIN_EFFECT if min_effect is None else min_effect):
        for m in series.metrics:
            if INSTRUCTION_PREFIX + m.metric == metric:
                d = m.decision
                out.append(SeriesEffect(describe_group(series.group), d.verdict, d.change,
                                        d.low, d.high, d.reason, d.runs_needed,
                                        min(len(m.base), len(m.new))))
    return out


def classify(verdict: Verdict, direction: Verdict) -> Mark | None:
    """A step's mark from its verdict (module doc); None: more runs may settle it."""
    if verdict is direction:
        return Mark.BAD
    if verdict in (Verdict.NO_CHANGE, Verdict.REGRESSION, Verdict.IMPROVEMENT):
        return Mark.GOOD
    if verdict in (Verdict.INCONCLUSIVE, Verdict.UNSTABLE):
        return None
    return Mark.SKIP


def more_runs(done: int, runs: int, max_runs: int, needed: int | None,
              each_look: bool = False) -> int:
    """Runs per side to add to an unsettled step: what the rule says it needs (else
    ``runs``), within the budget ``max_runs``; 0 when the budget is spent. ``each_look``
    (timing, judged at a level that pays for a look after every added run:
    ``sequential.budget_rule``): at most ``runs`` at a time, so a step that a few more runs
    settle stops there — the estimate of what it needs is inflated by the very outliers
    that more runs dilute (a neutral step's p50 with two slow runs of five: "needs ~37
    more runs", settled within ±2% by 40)."""
    remaining = max_runs - done
    wanted = max(needed or runs, 1)
    return max(0, min(wanted, runs if each_look else wanted, remaining))


# ---------------------------------------------------------------- the search


@dataclass(frozen=True)
class Outcome:
    """Where the search stands: the last good and first bad index, and the skipped
    commits between them."""

    good: int
    bad: int
    skipped: tuple[int, ...]

    @property
    def found(self) -> bool:
        """The first bad commit is known (``bad``)."""
        return self.bad == self.good + 1


def outcome(count: int, marks: Mapping[int, Mark]) -> Outcome:
    """The bounds of ``count`` commits (GOOD = 0 good, BAD = count − 1 bad) under ``marks``;
    a good mark above the first bad one (a non-monotone metric) is ignored."""
    if count < 2:
        raise ValueError("a bisection needs GOOD and BAD")
    bad = min([i for i, m in marks.items() if m is Mark.BAD] + [count - 1])
    good = max([i for i, m in marks.items() if m is Mark.GOOD and i < bad] + [0])
    skipped = tuple(i for i in range(good + 1, bad) if marks.get(i) is Mark.SKIP)
    return Outcome(good, bad, skipped)


def next_candidate(count: int, marks: Mapping[int, Mark]) -> int | None:
    """The untested commit nearest the midpoint (module doc); None when the search is over."""
    bounds = outcome(count, marks)
    untested = [i for i in range(bounds.good + 1, bounds.bad) if i not in marks]
    if not untested:
        return None
    mid = (bounds.good + bounds.bad) // 2
    return min(untested, key=lambda i: (abs(i - mid), -i))


def max_steps(commits: int) -> int:
    """The steps a bisection of ``commits`` commits (GOOD..BAD) takes with nothing skipped
    and no step inconclusive, the first (GOOD vs BAD) included: ⌈log2 n⌉ + 1."""
    return math.ceil(math.log2(max(commits, 1))) + 1


def series_text(params: Mapping[str, ParamValue]) -> str:
    """A stored series' parameters as ``--series`` takes them (describe_group's words)."""
    return describe_group(tuple(params.items()))
