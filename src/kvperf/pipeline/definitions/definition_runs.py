"""Benchmark definitions as workflows: `run --definitions` (the planned tests prepared,
refusals reported, then run with the live store) and the tests interleaved on several
sides (`compare --definitions`, each batch of `bisect --definitions`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kvperf.config.model import ProfileSettings
from kvperf.core.errors import UsageError
from kvperf.definitions.plan import Plan, plans_of, refusals_of
from kvperf.pipeline.definitions.definition_sides import (
    DefinitionSides,
    prepare_definition_sides,
    run_definition_sides,
)
from kvperf.pipeline.definitions.definitions import DefinitionRun, prepare_definitions
from kvperf.pipeline.request.common import StoreRequest
from kvperf.pipeline.request.options import NO_SNAPSHOTS, InterferencePolicy, Snapshots
from kvperf.pipeline.request.run import DefinitionsRequest
from kvperf.pipeline.request.sides import CompareRequest, default_label
from kvperf.pipeline.run.builds import BuildObserver
from kvperf.pipeline.run.logs import log_to
from kvperf.pipeline.run.model import Observer, RunSummary
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.run.storage import Persisted, execute_persisting, live_store
from kvperf.pipeline.sides.interleaved import compare_sides
from kvperf.pipeline.sides.sides import Side
from kvperf.pipeline.world import World
from kvperf.results.row import Row

Refused = Sequence[tuple[str, str, str]]  # (test, topology, why)


class DefinitionHooks(Protocol):
    def refused(self, refused: Refused) -> None: ...

    def tests(self) -> Observer: ...

    def sides_planned(self, prepared: DefinitionSides, sides: int) -> None: ...


@dataclass
class DefinitionsRan:
    run: DefinitionRun
    persisted: Persisted[RunSummary]


def run_definitions(request: DefinitionsRequest, world: World, hooks: DefinitionHooks
                    ) -> DefinitionsRan:
    """Prepare the planned tests (what cannot run here is reported; none → exit 2), then
    run them, every row persisted as it finishes."""
    run = prepare_definitions(plans_of(request.planned), request.options)
    hooks.refused([*refusals_of(request.planned),
                   *((p.name, p.topology.name, why) for p, why in run.refused)])
    if not run.plans:
        raise UsageError(f"none of the {len(request.planned)} selected test(s) can run here "
                         "(reasons above)")
    log_to(run.out_dir, "WARNING")  # a snapshot found unusable, say, on stderr too
    persisted = execute_persisting(
        request.store, world,
        lambda store: Runner(run, hooks.tests(), store, world.launcher,
                             policy=request.interference))
    return DefinitionsRan(run, persisted)


def run_on_sides(plans: tuple[Plan, ...], sides: list[Side], out_dir: Path, runs: int,
                 seed: int | None, profile: ProfileSettings | None, store: StoreRequest,
                 world: World, hooks: DefinitionHooks,
                 policy: InterferencePolicy | None = None, snapshots: Snapshots = NO_SNAPSHOTS
                 ) -> tuple[dict[str, list[Row]], DefinitionSides]:
    """Prepare every side (exit 2 when no test runs on all), run the rounds interleaved
    with the live store (checked at the end); ``policy``: what disturbed tests get;
    ``snapshots``: the cache every side's preloads use (a snapshot one side saved, the
    other loads when its server writes the same RDB format)."""
    prepared = prepare_definition_sides(plans, sides, out_dir, runs, seed, profile, snapshots)
    hooks.refused([(p.name, p.topology.name, why) for p, why in prepared.refused])
    if not prepared.plans:
        raise UsageError(f"none of the {len(plans)} selected test(s) can run on every "
                         "side (reasons above)")
    hooks.sides_planned(prepared, len(sides))
    log_to(out_dir)
    with live_store(store, world) as writer:
        rows = run_definition_sides(prepared, hooks.tests(), writer, world.launcher, policy)
    if writer is not None:
        writer.check()
    return rows, prepared


class CompareDefinitionHooks(BuildObserver, DefinitionHooks, Protocol):
    pass


def compare_definitions(request: CompareRequest, world: World, hooks: CompareDefinitionHooks
                        ) -> tuple[dict[str, list[Row]], DefinitionSides]:
    """`compare A B --definitions …`: the sides built, their tests run interleaved."""
    assert request.definitions is not None
    sides = compare_sides(request, world, hooks)
    out_dir = request.sides.results_dir / (request.sides.label or default_label("compare"))
    return run_on_sides(plans_of(request.definitions), sides, out_dir, request.sides.runs,
                        request.sides.seed, request.sides.profile, request.store, world, hooks,
                        request.sides.interference, request.snapshots)
