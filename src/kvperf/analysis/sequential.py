"""`--runs auto`: rounds added one at a time, each series until it is decided (pure).

A group-sequential design over the verdict rule (``analysis.verdict``). Rounds run one at a
time; from ``min_rounds`` on, the rule looks after each round at every series still open
(``Looks``): its primary metric (rps) a regression, an improvement or no change, or any of
its metrics flagged, decides the series, which then **stops on its own** — it keeps that
verdict and its rounds, later rounds do not run it (pipeline/sides/ab.py skips its works),
and later looks judge it on its rows up to its stop beside the open series. The comparison
ends when no series is open, or at ``max_rounds``. What a user waits for is the series that
moved; an unchanged series proven "no change" only once its 95% interval lies within ± its
minimum effect no longer holds the others back.

Looking again after each round gives a no-change comparison more chances to flag
something, so each look tests at a level below the rule's α (0.01): one constant level per
``--max-runs``, as in Pocock's design (Pocock 1977, "Group sequential methods in the design
and analysis of clinical trials", Biometrika 64:191–199; ``POCOCK``), found not from
normal-theory boundaries (the rule is a paired t at 2–11 degrees of freedom, behind a
two-stage multiple-testing correction, a rank check and a minimum effect) but by simulation
of the rule itself, as Jennison & Turnbull recommend for non-standard statistics ("Group
Sequential Methods with Applications to Clinical Trials", 2000, ch. 2 and 19): the largest
level at which every A/A cell of the simulation (``analysis.sequential_calibration``:
paired, CV 0.5–10%, normal, log-normal and stalls) flags any row at any look in ≤ 1% of
comparisons. A ``--max-runs`` not calibrated tests at α / looks at every look (Bonferroni).
The table a comparison ends with shows each series as the look that stopped it judged it
(``Looks.final``), so a stop line and its table agree and it adds no false alarm to the
looks'.

Two variants were measured against it and not kept (docs/PERFORMANCE.md "Sequential
verdicts"), both still here for the benchmarks that measured them: levels spent unevenly
over the looks in the spirit of Lan & DeMets (Lan & DeMets 1983, Biometrika 70:659–663),
each look ``DECAY`` (0.8) of the one before, c · ``shape`` with c calibrated (``SPENT``,
``Design.spent``); and a look that also decides an open series on its rps tested in a
family of the open series' rps only, not among all the comparison's rows
(``Design.share``: the full rule at that share of the look's level). By simulation each
decides a 10% slowdown at most 0.2 rounds sooner at CV 1–3%, and detects it at CV 10% in
52–70% of comparisons against the constant level's 79%; on the real compares of a quiet
machine none decides it in fewer than 4 rounds on average (the fixed ``--runs`` 4).

"No change" (the 95% interval inside the minimum effect) does not depend on α; stopping
on it only ends the looks sooner, so it adds no false alarm and takes no correction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from kvperf.analysis.comparison import (
    GroupKey,
    MetricComparison,
    compare_paired,
    describe_group,
    group_key,
)
from kvperf.analysis.verdict import DEFAULT_RULE, Rule, Verdict
from kvperf.results.metrics import METRIC_SETS
from kvperf.results.row import AutoStop, Row

DEFAULT_MAX_ROUNDS = 12
MIN_ROUNDS = 3  # a paired t with fewer pairs has 1 degree of freedom: no look before
PRIMARY = "rps"  # the metric that decides a series
DECAY = 0.8  # each look's share of α, of the one before (``shape``)
FLAGS = (Verdict.REGRESSION, Verdict.IMPROVEMENT)
DECIDED = (*FLAGS, Verdict.NO_CHANGE)

# The calibrated level of every look, per --max-runs (looks after every round from
# MIN_ROUNDS, α = 0.01): the largest, between α/looks and α, with A/A false alarms ≤ 1% in
# every cell of the simulation (module doc; 2,000 comparisons a cell, Monte-Carlo sd of a
# cell at 1% ≈ 0.22%), each with its worst cell there. A level at α/looks is the floor:
# Bonferroni's, whose union bound holds, the simulation reading a cell a little above 1%
# there (within its noise). Made by (docs/PERFORMANCE.md "Sequential verdicts"):
#   python benchmarks/sequential_calibration.py --calibrate 3-16,20 --aa-reps 2000
POCOCK: dict[int, float] = {
    3: 0.01,  # one look: the fixed-n rule; 1.20% (CV 10% log-normal)
    4: 0.00542,  # 1.00% (CV 5% heavy)
    5: 0.00462,  # 1.00% (CV 10% log-normal)
    6: 0.00250,  # α/looks; 1.20% (CV 10% heavy)
    7: 0.00200,  # α/looks; 1.30% (CV 10% normal)
    8: 0.00198,  # 1.00% (CV 10% heavy)
    9: 0.00186,  # 1.00% (CV 5% log-normal)
    10: 0.00156,  # 1.00% (CV 10% normal)
    11: 0.00130,  # 1.00% (CV 10% log-normal)
    12: 0.00121,  # 1.00% (CV 10% log-normal)
    13: 0.00146,  # 1.00% (CV 5% normal)
    14: 0.00127,  # 1.00% (CV 10% normal)
    15: 0.00112,  # 1.00% (CV 10% log-normal)
    16: 0.00088,  # 1.00% (CV 10% heavy)
    20: 0.00074,  # 1.00% (CV 10% normal)
}

# The calibrated constant c of the spent levels, per --max-runs: the look after k rounds
# tests at c · shape(k) (module doc), c the largest between α (the levels sum to α: the
# union bound holds) and α / shape's first share (the first look at α) with A/A false
# alarms ≤ 1% in every cell of the simulation, with its worst cell there. A --max-runs not
# here keeps POCOCK's constant level, else α/looks. Made by (docs/PERFORMANCE.md
# "Sequential verdicts"):
#   python benchmarks/sequential_calibration.py --calibrate 12,10,3 --aa-reps 2000
SPENT: dict[int, float] = {
    3: 0.01,  # one look: the fixed-n rule; 1.20% (CV 10% log-normal)
    10: 0.01321,  # 1.00% (CV 5% log-normal)
    12: 0.01,  # the floor (the levels sum to α); 1.05% (CV 10% normal)
}


class Stop(StrEnum):
    """Why a sequential comparison stopped."""

    DECIDED = "decided"
    MAX_RUNS = "max-runs reached"


def shape(min_rounds: int, max_rounds: int) -> tuple[float, ...]:
    """The share of α each look spends, from the look after ``min_rounds`` rounds to the
    one after ``max_rounds``: a geometric decay, each look ``DECAY`` of the one before,
    the shares summing to 1 (module doc)."""
    weights = [DECAY ** j for j in range(max_rounds - min_rounds + 1)]
    return tuple(w / sum(weights) for w in weights)


@dataclass(frozen=True)
class Design:
    """Looks after every round from ``min_rounds`` to ``max_rounds``; ``alpha`` the chance
    of any flag over all looks when nothing changed; ``level`` one level for every look
    (None: ``POCOCK``'s constant level where ``max_rounds`` is calibrated, else Bonferroni,
    α/looks; with ``spent``, the look's spent level, ``SPENT``'s constant × ``shape``, where
    ``SPENT`` has ``max_rounds``). ``spent`` and ``share`` (the full rule at that share of
    the look's level, the open series' rps tested in a family of their own at the level)
    are the variants measured against the constant level and not kept (module doc)."""

    max_rounds: int = DEFAULT_MAX_ROUNDS
    min_rounds: int = MIN_ROUNDS
    alpha: float = DEFAULT_RULE.alpha
    level: float | None = None
    spent: bool = False  # the spent levels (SPENT × shape) where calibrated: measured, not kept
    share: float | None = None  # the primary family (module doc): measured, not kept

    def __post_init__(self) -> None:
        if self.min_rounds < 2 or self.max_rounds < self.min_rounds:
            raise ValueError(f"looks need 2 ≤ min_rounds ≤ max_rounds, got "
                             f"{self.min_rounds} and {self.max_rounds}")

    @property
    def schedule(self) -> range:
        """The rounds after which the rule looks."""
        return range(self.min_rounds, self.max_rounds + 1)

    @property
    def looks(self) -> int:
        return len(self.schedule)

    @property
    def kind(self) -> str:
        """Which rule sets the levels: ``spent`` (``SPENT``), ``pocock`` (``POCOCK``),
        ``bonferroni`` (α/looks) or ``given`` (``level``)."""
        if self.level is not None:
            return "given"
        if self.min_rounds != MIN_ROUNDS or self.alpha != DEFAULT_RULE.alpha:
            return "bonferroni"
        return "spent" if self.spent and self.max_rounds in SPENT else \
            "pocock" if self.max_rounds in POCOCK else "bonferroni"

    @property
    def calibrated(self) -> bool:
        """Whether the levels come from a calibration table (``SPENT`` or ``POCOCK``)."""
        return self.kind in ("spent", "pocock")

    def level_at(self, rounds: int) -> float:
        """The level the look after ``rounds`` rounds tests at (module doc); a round outside
        the looks takes the nearest look's."""
        kind = self.kind
        if self.level is not None:  # kind "given"
            return self.level
        if kind == "spent":
            look = min(max(rounds, self.min_rounds), self.max_rounds) - self.min_rounds
            return SPENT[self.max_rounds] * shape(self.min_rounds, self.max_rounds)[look]
        return POCOCK[self.max_rounds] if kind == "pocock" else self.alpha / self.looks

    @property
    def levels(self) -> dict[int, float]:
        """Each look's level, by the rounds it comes after."""
        return {k: self.level_at(k) for k in self.schedule}

    def rule(self, rounds: int, base: Rule = DEFAULT_RULE) -> Rule:
        """The verdict rule the look after ``rounds`` rounds applies: ``base`` at its level."""
        return replace(base, alpha=self.level_at(rounds))

    def looks_at(self, rounds: int) -> bool:
        """Whether the rule looks after ``rounds`` rounds."""
        return self.min_rounds <= rounds <= self.max_rounds


def budget_rule(first: int, most: int, base: Rule = DEFAULT_RULE) -> Rule:
    """The level of a step that looks after ``first`` runs and again as runs are added, up to
    ``most`` (a bisect step, pipeline/bisect.py): α divided by the looks it may take
    (most − first + 1, one per added run at most), as ``Design`` does where no calibrated
    level exists."""
    return replace(base, alpha=base.alpha / max(1, most - first + 1))


def decided(verdict: Verdict) -> bool:
    return verdict in DECIDED


@dataclass(frozen=True)
class SeriesStop:
    """One series at its stop: its primary verdict, the rounds judged, why it stopped."""

    series: str
    verdict: Verdict
    rounds: int
    stop: Stop

    def text(self) -> str:
        """``decided: regression after 6 rounds`` / ``max-runs reached: inconclusive``."""
        if self.stop is Stop.DECIDED:
            return f"decided: {self.verdict} after {self.rounds} rounds"
        return f"max-runs reached: {self.verdict} after {self.rounds} rounds"

    def record(self) -> AutoStop:
        """What each of the series' rows records (``Row.auto``)."""
        return AutoStop(rounds=self.rounds, stop=str(self.stop), verdict=str(self.verdict))


@dataclass
class Looks:
    """A comparison's looks so far: each series stops at the first look where it is
    decided, keeping that verdict, its rounds and that look's verdicts of its rows (later
    rounds do not run it), or at ``max_rounds``; the comparison stops when every series
    has."""

    design: Design
    stopped: dict[str, SeriesStop] = field(default_factory=dict)
    alarms: list[str] = field(default_factory=list)  # rows flagged at a look, series open
    judged: dict[str, list[MetricComparison]] = field(default_factory=dict)  # at its stop

    def after(self, verdicts: Sequence[tuple[str, Verdict]], rounds: int) -> bool:
        """The look after ``rounds`` rounds (none before the first): the open series
        decided here stop; True when no series is open."""
        last = rounds >= self.design.max_rounds
        if not last and not self.design.looks_at(rounds):
            return False
        for name, verdict in verdicts:
            if name not in self.stopped and (decided(verdict) or last):
                self.stopped[name] = SeriesStop(name, verdict, rounds, Stop.DECIDED
                                                if decided(verdict) else Stop.MAX_RUNS)
        return bool(verdicts) and all(name in self.stopped for name, _ in verdicts)

    def open(self, series: str) -> bool:
        return series not in self.stopped

    def kept(self, rows: Iterable[Row]) -> list[Row]:
        """The rows a look judges: a stopped series' up to its stop round."""
        return [r for r in rows if (s := self.stopped.get(series_of(r))) is None or
                int(r.get("run") or 0) <= s.rounds]

    def look(self, a_rows: list[Row], b_rows: list[Row], rounds: int, base: Rule = DEFAULT_RULE,
             metrics: str = "all") -> bool:
        """After ``rounds`` paired rounds: compare's verdicts at the look's level, each
        series on its kept rows; True: stop (``after``)."""
        if rounds < self.design.max_rounds and not self.design.looks_at(rounds):
            return False
        judged = self.judge(a_rows, b_rows, rounds, base, metrics)
        self.alarms += [f"{describe_group(c.group)} {c.metric}: {c.decision.verdict} at round "
                        f"{rounds}" for c in judged if c.decision.verdict in FLAGS and
                        self.open(describe_group(c.group))]
        verdicts = series_verdicts(judged)
        was_open = [name for name, _ in verdicts if self.open(name)]
        done = self.after(verdicts, rounds)
        for c in judged:
            if (name := describe_group(c.group)) in was_open and not self.open(name):
                self.judged.setdefault(name, []).append(c)
        return done

    def judge(self, a_rows: list[Row], b_rows: list[Row], rounds: int, base: Rule = DEFAULT_RULE,
              metrics: str = "all") -> list[MetricComparison]:
        """compare's verdicts at the level of the look after ``rounds``, each series on its
        kept rows; with ``Design.share``, the full rule at that share of the look's level, and
        an open series' rps row flagged at the look's level when tested in the family of the
        open series' rps rows only (module doc) is that one."""
        rule, share = self.design.rule(rounds, base), self.design.share
        a, b = self.kept(a_rows), self.kept(b_rows)
        judged = compare_paired(a, b, metrics, rule if share is None else
                                replace(rule, alpha=rule.alpha * share))
        if share is None or PRIMARY not in METRIC_SETS[metrics]:
            return judged
        a_open, b_open = ([r for r in rows if self.open(series_of(r))] for rows in (a, b))
        flagged = {c.group: c for c in compare_paired(a_open, b_open, PRIMARY, rule)
                   if c.decision.verdict in FLAGS}
        return [flagged.get(c.group, c) if c.metric == PRIMARY else c for c in judged]

    def final(self, a_rows: list[Row], b_rows: list[Row], base: Rule = DEFAULT_RULE,
              metrics: str = "all") -> list[MetricComparison]:
        """The verdicts a report shows: each stopped series' rows as the look that stopped
        it judged them (at that look's level, so a stop line and its table agree); a
        series still open (the rounds ended otherwise) on its rows, at the level of the
        look after the rounds run."""
        rounds = rounds_run(a_rows + b_rows)
        found: list[MetricComparison] = []
        shown: set[str] = set()
        for c in self.judge(a_rows, b_rows, rounds, base, metrics):
            name = describe_group(c.group)
            if name not in self.judged:
                found.append(c)
            elif name not in shown:
                shown.add(name)
                found += self.judged[name]
        return found

    def stops(self, series: Sequence[tuple[str, Verdict]], rounds: int) -> list[SeriesStop]:
        """Each series' stop line, in order: where it stopped; one still open (the rounds
        ended otherwise) with its verdict after ``rounds``."""
        return [self.stopped.get(name) or
                SeriesStop(name, v, rounds, Stop.DECIDED if decided(v) else Stop.MAX_RUNS)
                for name, v in series]


def replay(a_rows: list[Row], b_rows: list[Row], design: Design, base: Rule = DEFAULT_RULE,
           metrics: str = "all") -> Looks:
    """The looks a ``--runs auto`` comparison would have taken over stored paired rows:
    after round k, the rows of runs ≤ k (the stops of a run, or of fixed-round rows
    judged as if they had run auto)."""
    looks = Looks(design)
    for k in design.schedule:
        if k > rounds_run(a_rows + b_rows):
            break
        prefix = [[r for r in rows if int(r.get("run") or 0) <= k] for rows in (a_rows, b_rows)]
        if looks.look(prefix[0], prefix[1], k, base, metrics):
            break
    return looks


def recorded_stops(rows: Iterable[Row]) -> list[SeriesStop]:
    """The stops rows record (``Row.auto``: a ``--runs auto`` comparison's), one per
    series in order; none for rows of a fixed number of runs."""
    found: dict[str, SeriesStop] = {}
    for row in rows:
        auto = row.get("auto")
        if not auto or (name := series_of(row)) in found:
            continue
        try:
            found[name] = SeriesStop(name, Verdict(auto["verdict"]), int(auto["rounds"]),
                                     Stop(auto["stop"]))
        except (KeyError, TypeError, ValueError):  # not what kvperf wrote: no stop line
            continue
    return list(found.values())


def series_of(row: Row) -> str:
    """The series a row belongs to, as stop lines name it."""
    return describe_group(group_key(row))


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


def rounds_run(rows: Iterable[Row]) -> int:
    """The rounds the rows hold (their highest ``run``)."""
    return max((int(r.get("run") or 0) for r in rows), default=0)
