"""`--runs auto`: rounds added one at a time until every series is decided (pure).

A group-sequential design over the verdict rule (``analysis.verdict``). Rounds run one at a
time; from ``min_rounds`` on, the rule looks after each round at every series: its primary
metric (rps) a regression, an improvement or no change, or any of its metrics flagged,
decides the series; the comparison stops when every series is decided, else it adds a
round, up to ``max_rounds``.

Looking again after each round gives a no-change comparison more chances to flag
something, so each look tests at a nominal level below the rule's α (0.01): Pocock's
design, one constant level at every look (Pocock 1977, "Group sequential methods in the
design and analysis of clinical trials", Biometrika 64:191–199), spent by the power
family α·(looks)^−γ (Kim & DeMets 1987, "Design and analysis of group sequential tests
based on the type I error spending rate function", Biometrika 74:149–154, in its
per-look form). γ = 1 is Bonferroni over the looks: the fixed-n rule flags a no-change
comparison with chance ≤ α at any n, so the union bound keeps the chance of a flag at any
look ≤ α for any ``max_rounds``. Successive looks share most of their rounds, so that bound
is loose; the simulation (``analysis.sequential_calibration``,
``benchmarks/sequential_calibration.py``, docs/PERFORMANCE.md "Sequential verdicts")
measured the cells nearest the target with 12 rounds: γ = 1 flags 0.47–0.68%, γ = 0.85
0.60–0.93%, γ = 0.75 1.03%, γ = 0 (no correction) 4–7%. γ = 1 is kept: the bound holds
whatever ``--max-runs`` a user gives, where 0.85 was measured only at 12.

"No change" (the 95% interval inside the minimum effect) does not depend on α; stopping
on it only ends the looks sooner, so it adds no false alarm.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from kvperf.analysis.comparison import GroupKey, MetricComparison, compare_paired, describe_group
from kvperf.analysis.verdict import DEFAULT_RULE, Rule, Verdict
from kvperf.results.row import Row

DEFAULT_MAX_ROUNDS = 12
MIN_ROUNDS = 3  # a paired t with fewer pairs has 1 degree of freedom: no look before
SPENDING_EXPONENT = 1.0  # γ, calibrated (module doc)
PRIMARY = "rps"  # the metric that decides a series
FLAGS = (Verdict.REGRESSION, Verdict.IMPROVEMENT)
DECIDED = (*FLAGS, Verdict.NO_CHANGE)


class Stop(StrEnum):
    """Why a sequential comparison stopped."""

    DECIDED = "decided"
    MAX_RUNS = "max-runs reached"


@dataclass(frozen=True)
class Design:
    """Looks after rounds ``min_rounds`` … ``max_rounds``; ``alpha`` the chance of any flag
    over all looks when nothing changed; ``exponent`` γ (module doc)."""

    max_rounds: int = DEFAULT_MAX_ROUNDS
    min_rounds: int = MIN_ROUNDS
    alpha: float = DEFAULT_RULE.alpha
    exponent: float = SPENDING_EXPONENT

    def __post_init__(self) -> None:
        if self.min_rounds < 2 or self.max_rounds < self.min_rounds:
            raise ValueError(f"looks need 2 ≤ min_rounds ≤ max_rounds, got "
                             f"{self.min_rounds} and {self.max_rounds}")

    @property
    def looks(self) -> int:
        return self.max_rounds - self.min_rounds + 1

    @property
    def nominal(self) -> float:
        """The level every look tests at: α · looks^−γ (γ = 0: no correction)."""
        return float(self.alpha * self.looks ** -self.exponent)

    def rule(self, base: Rule = DEFAULT_RULE) -> Rule:
        """The verdict rule a look applies: ``base`` at the nominal level."""
        return replace(base, alpha=self.nominal)

    def looks_at(self, rounds: int) -> bool:
        """Whether the rule looks after ``rounds`` rounds."""
        return self.min_rounds <= rounds <= self.max_rounds


def budget_rule(first: int, most: int, base: Rule = DEFAULT_RULE) -> Rule:
    """The level of a step that looks after ``first`` runs and again as runs are added, up to
    ``most`` (a bisect step, pipeline/bisect.py): α divided by the looks it may take
    (most − first + 1, one per added run at most), as ``Design.nominal`` divides it."""
    return replace(base, alpha=base.alpha / max(1, most - first + 1))


def decided(verdict: Verdict) -> bool:
    return verdict in DECIDED


@dataclass(frozen=True)
class SeriesStop:
    """One series at the stop: its primary verdict, the rounds judged, why it stopped."""

    series: str
    verdict: Verdict
    rounds: int
    stop: Stop

    def text(self) -> str:
        """``decided: regression after 6 rounds`` / ``max-runs reached: inconclusive``."""
        if self.stop is Stop.DECIDED:
            return f"decided: {self.verdict} after {self.rounds} rounds"
        return f"max-runs reached: {self.verdict} after {self.rounds} rounds"


def should_stop(verdicts: Sequence[Verdict], rounds: int, design: Design) -> bool:
    """After ``rounds`` rounds with these primary verdicts (one per series): stop?"""
    if rounds >= design.max_rounds:
        return True
    return design.looks_at(rounds) and bool(verdicts) and all(map(decided, verdicts))


def stops(series: Sequence[tuple[str, Verdict]], rounds: int, design: Design
          ) -> list[SeriesStop]:
    """Each series' stop line once the comparison stopped after ``rounds`` rounds."""
    return [SeriesStop(name, v, rounds,
                       Stop.DECIDED if decided(v) else Stop.MAX_RUNS)
            for name, v in series]


def series_verdicts(comparisons: Iterable[MetricComparison]) -> list[tuple[str, Verdict]]:
    """Each series' verdict, in order: its rps row's (else its first row's) when decided,
    else the first flagged row's (server CPU per request often settles before rps), else
    its rps row's."""
    primary: dict[GroupKey, MetricComparison] = {}
    flagged: dict[GroupKey, Verdict] = {}
    for c in comparisons:
        if c.group not in primary or (c.metric == PRIMARY and
                                      primary[c.group].metric != PRIMARY):
            primary[c.group] = c
        if c.decision.verdict in FLAGS:
            flagged.setdefault(c.group, c.decision.verdict)
    return [(describe_group(g), c.decision.verdict if decided(c.decision.verdict)
             else flagged.get(g, c.decision.verdict)) for g, c in primary.items()]


def look(a_rows: list[Row], b_rows: list[Row], rounds: int, design: Design,
         base: Rule = DEFAULT_RULE, metrics: str = "all") -> bool:
    """After ``rounds`` paired rounds: stop (``should_stop`` on compare's verdicts at the
    design's level)?"""
    if rounds < design.max_rounds and not design.looks_at(rounds):
        return False
    verdicts = series_verdicts(compare_paired(a_rows, b_rows, metrics, design.rule(base)))
    return should_stop([v for _, v in verdicts], rounds, design)


def rounds_run(rows: Iterable[Row]) -> int:
    """The rounds the rows hold (their highest ``run``)."""
    return max((int(r.get("run") or 0) for r in rows), default=0)
