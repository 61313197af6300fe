"""Interleaved A/B: both sides run every trial of every round, in a random order per trial.

Alternating sides trial by trial (order drawn from a recorded seed) spreads machine drift
evenly over A and B, so it cannot masquerade as a code change; pairs are (trial, run).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from kvperf.core.errors import UsageError
from kvperf.pipeline.run import Observer, Prepared, Runner
from kvperf.store.writer import TrialWriter


@dataclass
class ABResult:
    """Rows of both sides and how they were ordered."""

    a_rows: list[dict[str, Any]]
    b_rows: list[dict[str, Any]]
    seed: int
    order: list[str]
    store: TrialWriter | None = None

    def check_store(self) -> None:
        """StoreError if some finished trials did not reach the database (see TrialWriter)."""
        if self.store is not None:
            self.store.check()


def side_order(seed: int, trials: int) -> list[tuple[str, str]]:
    """For each trial, which side runs first (pure, reproducible from the seed)."""
    rng = random.Random(seed)
    return [("A", "B") if rng.random() < 0.5 else ("B", "A") for _ in range(trials)]


def check_same_plan(a: Prepared, b: Prepared) -> None:
    if [t.id for t in a.trials] != [t.id for t in b.trials]:
        raise UsageError("the two sides of a comparison must run the same plan")


def interleave(a: Prepared, b: Prepared, seed: int, observer: Observer,
               store: TrialWriter | None = None) -> ABResult:
    """Run every trial on both sides, persisting each row as it finishes."""
    check_same_plan(a, b)
    runners = {"A": Runner(a, observer, store), "B": Runner(b, observer, store)}
    result = ABResult([], [], seed, [], store)
    total = 2 * len(a.trials)
    for trial, order in zip(a.trials, side_order(seed, len(a.trials)), strict=True):
        for side in order:
            observer.trial_started(trial, len(result.order) + 1, total)
            row = runners[side].run_trial(trial) | {"side": side, "ab_seed": seed}
            runners[side].persist(row)
            (result.a_rows if side == "A" else result.b_rows).append(row)
            result.order.append(side)
            observer.trial_finished(trial, row)
    return result
