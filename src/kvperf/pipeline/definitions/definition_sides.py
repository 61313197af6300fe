"""`kvperf compare A B --definitions …`: benchmark definitions run interleaved on two sides.

Every side is prepared first (its server, memtier's front end; exit 2 before any server),
then each round runs every definition's test on every side in a seeded random order, each
on a fresh server, so drift lands on both sides alike. Rows are ordinary definition rows
with ``run`` = the round and ``side``/``ab_seed``/``ab_schedule`` set, persisted as they
finish, so ``compare_paired`` pairs them by series and round like any comparison.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from kvperf.config.model import ProfileSettings
from kvperf.core.errors import BuildError, UsageError
from kvperf.definitions.plan import Plan
from kvperf.pipeline.definitions.definitions import (
    DefinitionOptions,
    DefinitionRun,
    prepare_definitions,
)
from kvperf.pipeline.request.options import NO_SNAPSHOTS, InterferencePolicy, Snapshots
from kvperf.pipeline.run.model import Observer
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.sides.ab import interleave
from kvperf.pipeline.sides.sides import Side
from kvperf.pipeline.world import Launcher
from kvperf.results.row import Row
from kvperf.server.instance import ServerGroup
from kvperf.store.writer import TrialWriter


@dataclass(frozen=True)
class DefinitionSides:
    """Every side prepared; the tests all of them can run; the rounds and order seed."""

    runs: dict[str, DefinitionRun]
    plans: tuple[Plan, ...]
    refused: tuple[tuple[Plan, str], ...]
    rounds: int
    seed: int

    @property
    def tests(self) -> int:
        return self.rounds * len(self.plans) * len(self.runs)


def _side_run(plans: tuple[Plan, ...], side: Side, out_dir: Path,
              profile: ProfileSettings | None, snapshots: Snapshots) -> DefinitionRun:
    if side.blocked or side.server_bin is None:
        raise BuildError(f"side {side.name} has no server: {side.blocked or 'not built'}")
    run = prepare_definitions(plans, DefinitionOptions(
        out_dir, side.name, side.server_bin, profile=profile, snapshots=snapshots))
    env = {**run.context.env, **dict(side.provenance)}
    return replace(run, context=replace(run.context, commit=side.commit, env=env))


def prepare_definition_sides(plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                             rounds: int, seed: int | None = None,
                             profile: ProfileSettings | None = None,
                             snapshots: Snapshots = NO_SNAPSHOTS) -> DefinitionSides:
    """Prepare every side (UsageError before any server); the tests every side can run."""
    if rounds < 1:
        raise UsageError(f"--runs must be at least 1, got {rounds}")
    runs = {side.name: _side_run(plans, side, out_dir, profile, snapshots) for side in sides}
    refused = {id(p): (p, why) for run in runs.values() for p, why in run.refused}
    runnable = tuple(p for p in plans if id(p) not in refused)
    drawn = seed if seed is not None else secrets.randbelow(2**31)
    return DefinitionSides({name: replace(run, plans=runnable, rounds=rounds)
                            for name, run in runs.items()},
                           runnable, tuple(refused.values()), rounds, drawn)


def run_definition_sides(sides: DefinitionSides, observer: Observer,
                         store: TrialWriter | None, launcher: Launcher = ServerGroup,
                         policy: InterferencePolicy | None = None) -> dict[str, list[Row]]:
    """Every round: every test on every side in a seeded random order (pipeline/sides/ab.py's
    interleaver); rows by side."""
    runners = {name: Runner(run, observer, store, launcher, policy=policy)
               for name, run in sorted(sides.runs.items())}
    return interleave(runners, sides.seed, observer, store=store).rows
