"""Interleaved sides: every side runs every trial of every round, in a random order per trial.

Alternating sides trial by trial (order drawn from a recorded seed) spreads machine drift
evenly over them, so it cannot masquerade as a code change; pairs are (trial, run). A/B
(compare, noise) is the two-side case; ``kvperf run --commits`` uses as many sides as commits.
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kvperf.analysis.sequential import Looks
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Schedule
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.run.duet import check_duet, run_duet_round
from kvperf.pipeline.run.model import Observer, Prepared, Work
from kvperf.pipeline.run.rate_sweep import SweepBatch, sweeping
from kvperf.pipeline.run.runner import Runner, retried
from kvperf.pipeline.world import Launcher
from kvperf.results.row import Row, is_ok
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")


@dataclass
class SidesResult:
    """list[Row] per side (in side order) and the order the trials ran in."""

    rows: dict[str, list[Row]]
    seed: int
    order: list[str] = field(default_factory=list)
    store: TrialWriter | None = None
    looks: Looks | None = None  # --runs auto: where each series stopped

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


RoundCheck = Callable[[SidesResult, int], bool]  # after round k: stop here?
Skip = Callable[[Row], bool]  # a work whose first-round row is this one: not run any more?


@dataclass(frozen=True)
class Rounds:
    """``--runs auto``: the works of one round (per side), the check after each round
    (True: stop; the rounds not run are never started) and ``skip``: a work of a later
    round whose series stopped (by its first round's row) is not run."""

    size: int
    stop: RoundCheck
    skip: Skip | None = None
    counted: set[int] = field(default_factory=set)  # stopped positions off the total

    def skips(self, index: int, first: dict[int, Row]) -> bool:
        """Whether the work at ``index`` is left out (its series stopped)."""
        position = index % self.size
        return self.skip is not None and position in first and self.skip(first[position])

    def left_out(self, index: int, count: int, first: dict[int, Row]) -> int:
        """After the work at ``index`` (of ``count`` per side): at the end of a round, the
        works per side of the rounds left that the series stopped since the last round
        will not run (the progress total drops by them); else 0."""
        if (index + 1) % self.size:
            return 0
        newly = {p for p in range(self.size) if self.skips(p, first)} - self.counted
        self.counted.update(newly)
        return len(newly) * (count - index - 1) // self.size

    def check(self, index: int, result: SidesResult) -> bool:
        """After the work at ``index``: the end of a round, and the rule says stop?"""
        return (index + 1) % self.size == 0 and self.stop(result, (index + 1) // self.size)


def interleave(runners: Mapping[str, Runner], seed: int, observer: Observer,
               schedule: Schedule = Schedule.ALTERNATE, labels: dict[str, str] | None = None,
               store: TrialWriter | None = None, rounds: Rounds | None = None
               ) -> SidesResult:
    """The one interleaver of sides: every unit of work on every side, persisting each row
    as it finishes. The sides' batches must hold the same works (by identity), in rounds
    (a round's works come before the next round's).

    ``alternate``: the sides' works run one after another, in a random order per work drawn
    from ``seed``; ``duet``: they run at the same time (pipeline/run/duet.py), started in that
    order. ``labels``: each side's readable label, recorded in its rows (``side_label``).
    ``rounds``: stop early when its check says so after a round (``--runs auto``); after
    each round the progress total drops by the works of the rounds left that a series
    stopped by then will not run.
    """
    works = {name: runner.batch.works() for name, runner in runners.items()}
    identities = [[w.identity for w in side] for side in works.values()]
    if any(i != identities[0] for i in identities):
        raise UsageError("the sides of a comparison must run the same plan")
    count = len(identities[0])
    result = SidesResult({name: [] for name in runners}, seed, store=store)
    total = [len(runners) * count]  # less what stopped series leave out (--runs auto)

    def started(index: int, side: str) -> None:
        result.order.append(side)
        observer.started(works[side][index], len(result.order), total[0])

    first: dict[int, Row] = {}  # each position's row in the first round (--runs auto)

    def finished(index: int, side: str, row: Row) -> None:
        first.setdefault(index, row)
        row["side"], row["ab_seed"], row["ab_schedule"] = side, seed, str(schedule)
        if labels is not None:
            row["side_label"] = labels.get(side, side)
        runners[side].persist(row)
        result.rows[side].append(row)
        observer.finished(works[side][index], row)

    try:
        for index, order in enumerate(side_orders(seed, list(runners), count)):
            if rounds is not None and rounds.skips(index, first):
                pass
            elif schedule == Schedule.DUET:
                rows = _duet_round(runners, {s: works[s][index] for s in runners}, order,
                                   functools.partial(started, index))
                for side in order:
                    finished(index, side, rows[side])
            else:
                for side in order:
                    started(index, side)
                    finished(index, side, runners[side].run_trial(works[side][index]))
            if rounds is not None and rounds.check(index, result):
                break
            if rounds is not None:
                total[0] -= rounds.left_out(index, count, first) * len(runners)
    finally:
        for runner in runners.values():
            runner.release()
    return result


def _duet_round(runners: Mapping[str, Runner], works: Mapping[str, Work],
                order: Sequence[str], started: Callable[[str], None]) -> dict[str, Row]:
    """One duet round; when a side was disturbed under --retry-disturbed, the round once
    more on every side (their measure stages must overlap, so all of them rerun)."""
    rows = run_duet_round(runners, works, order, started)
    disturbed = [s for s in order if runners[s].wants_retry(rows[s])]
    if disturbed:
        first = rows
        side = disturbed[0]
        log.warning("%s was disturbed on side %s (%s): running the duet round once more on "
                    "every side", works[side].name, side,
                    (rows[side].get("interference") or {}).get("cause"))
        rows = run_duet_round(runners, works, order, lambda _side: None)
        rows = {s: retried(rows[s], first[s]) for s in rows}
    return {s: runners[s].settle(row) for s, row in rows.items()}


def interleave_sides(sides: dict[str, Prepared], seed: int, observer: Observer,
                     store: TrialWriter | None = None,
                     schedule: Schedule = Schedule.ALTERNATE,
                     labels: dict[str, str] | None = None,
                     launcher: Launcher | None = None,
                     policy: InterferencePolicy | None = None,
                     stop: RoundCheck | None = None, skip: Skip | None = None
                     ) -> SidesResult:
    """Config-matrix sides interleaved (compare, noise, run --commits, bisect batches,
    N-server compares). ``launcher``: where the servers start (default: here;
    server/remote.py: over SSH); ``policy``: what disturbed trials get; ``stop``: checked
    after each round, ``skip``: the works of stopped series left out (``--runs auto``)."""
    prepared = list(sides.values())
    if schedule == Schedule.DUET:
        check_duet(prepared[0].trials, prepared[0].options.measure, len(prepared))
    batches = {name: SweepBatch(p) if sweeping(p) else p for name, p in sides.items()}
    runners = {name: (Runner(b, observer, store, launcher=launcher, policy=policy) if launcher
                      else Runner(b, observer, store, policy=policy))
               for name, b in batches.items()}
    size = sum(1 for t in prepared[0].trials if t.run == 1)
    rounds = Rounds(size, stop, skip) if stop is not None and size else None
    return interleave(runners, seed, observer, schedule, labels or {}, store, rounds)

