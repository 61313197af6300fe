"""Interleaved sides: every side runs every trial of every round, in a random order per trial.

Alternating sides trial by trial (order drawn from a recorded seed) spreads machine drift
evenly over them, so it cannot masquerade as a code change; pairs are (trial, run). A/B
(compare, noise) is the two-side case; ``kvperf run --commits`` uses as many sides as commits.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from kvperf.core.errors import UsageError
from kvperf.core.kinds import Schedule
from kvperf.pipeline.duet import check_duet, run_duet_round
from kvperf.pipeline.model import Launcher, Observer, Prepared
from kvperf.pipeline.runner import Runner
from kvperf.plan.trial import Trial
from kvperf.results.row import Row, is_ok
from kvperf.store.writer import TrialWriter


@dataclass
class SidesResult:
    """list[Row] per side (in side order) and the order the trials ran in."""

    rows: dict[str, list[Row]]
    seed: int
    order: list[str] = field(default_factory=list)
    store: TrialWriter | None = None

    def check_store(self) -> None:
        """StoreError if some finished trials did not reach the database (see TrialWriter)."""
        if self.store is not None:
            self.store.check()

    @property
    def a_rows(self) -> list[Row]:
        return self.rows["A"]

    @property
    def b_rows(self) -> list[Row]:
        return self.rows["B"]

    @property
    def failed(self) -> int:
        return sum(1 for rows in self.rows.values() for r in rows if not is_ok(r))


ABResult = SidesResult


def side_orders(seed: int, sides: Sequence[str], trials: int) -> list[list[str]]:
    """For each trial, the order the sides run in (pure, reproducible from the seed)."""
    rng = random.Random(seed)
    return [rng.sample(list(sides), len(sides)) for _ in range(trials)]


def side_order(seed: int, trials: int) -> list[tuple[str, str]]:
    """The A/B case of ``side_orders``."""
    return [(o[0], o[1]) for o in side_orders(seed, ("A", "B"), trials)]


def check_same_plan(prepared: Sequence[Prepared]) -> None:
    ids = [[t.id for t in p.trials] for p in prepared]
    if any(i != ids[0] for i in ids):
        raise UsageError("the sides of a comparison must run the same plan")


def interleave_sides(sides: dict[str, Prepared], seed: int, observer: Observer,
                     store: TrialWriter | None = None,
                     schedule: Schedule = Schedule.ALTERNATE,
                     labels: dict[str, str] | None = None,
                     launcher: Launcher | None = None) -> SidesResult:
    """Run every trial on every side, persisting each row as it finishes.

    ``alternate``: the sides' trials run one after another, in a random order per trial;
    ``duet``: they run at the same time (pipeline/duet.py), started in that order.
    ``labels``: each side's readable label, recorded in its rows (``side_label``).
    ``launcher``: where the servers start (default: here; server/remote.py: over SSH).
    """
    prepared = list(sides.values())
    check_same_plan(prepared)
    if schedule == Schedule.DUET:
        check_duet(prepared[0].trials, prepared[0].options.measure, len(prepared))
    runners = {name: (Runner(p, observer, store, launcher=launcher) if launcher
                      else Runner(p, observer, store)) for name, p in sides.items()}
    result = SidesResult({name: [] for name in sides}, seed, store=store)
    trials = prepared[0].trials
    total = len(sides) * len(trials)

    def started(trial: Trial, side: str) -> None:
        result.order.append(side)
        observer.trial_started(trial, len(result.order), total)

    def finished(trial: Trial, side: str, row: Row) -> None:
        row["side"], row["ab_seed"], row["ab_schedule"] = side, seed, schedule
        row["side_label"] = (labels or {}).get(side, side)
        runners[side].persist(row)
        result.rows[side].append(row)
        observer.trial_finished(trial, row)

    for trial, order in zip(trials, side_orders(seed, list(sides), len(trials)), strict=True):
        if schedule == Schedule.DUET:
            rows = run_duet_round(runners, trial, order, functools.partial(started, trial))
            for side in order:
                finished(trial, side, rows[side])
            continue
        for side in order:
            started(trial, side)
            finished(trial, side, runners[side].run_trial(trial))
    return result


def interleave(a: Prepared, b: Prepared, seed: int, observer: Observer,
               store: TrialWriter | None = None, schedule: Schedule = Schedule.ALTERNATE
               ) -> SidesResult:
    return interleave_sides({"A": a, "B": b}, seed, observer, store, schedule)
