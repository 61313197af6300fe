"""`kvperf bisect GOOD BAD` and the bisections of `kvperf regressions --bisect`: the
question (series, metric, measure, runs, budget, --min-effect, definitions), how commits
are built and where the batches' rows go, checked before any fetch or build."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan, Refusal
from kvperf.pipeline.bisect import BisectRequest, settle
from kvperf.pipeline.request.common import (
    SELECTION_ONLY,
    BuildFlags,
    DefinitionFlags,
    StoreFlags,
    build_request,
    min_effect,
    plan_definitions,
    plans_of,
    refusals_of,
    runnable,
    store_request,
)


@dataclass(frozen=True)
class BisectFlags:
    """`kvperf bisect`'s flags as given."""

    good: str
    bad: str
    series: str | None = None
    metric: str | None = None
    measure: Measure | None = None
    runs: int | None = None
    max_runs: int | None = None
    min_effect: float = DEFAULT_MIN_EFFECT * 100  # percent
    resume: bool = False
    tool: str | None = None
    config: Path | None = None
    label: str | None = None
    seed: int | None = None
    output: Path | None = None
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    definitions: DefinitionFlags = field(default_factory=DefinitionFlags)


def bisect_request(flags: BisectFlags) -> BisectRequest:
    """Every check of `kvperf bisect` that needs no repository (UsageError, exit 2); the
    plan's series and GOOD..BAD are checked first thing by the workflow, before any build."""
    build = build_request(flags.build)
    effect = min_effect(flags.min_effect)
    planned: tuple[Plan | Refusal, ...] = ()
    if flags.definitions.given:
        planned = runnable(plan_definitions(flags.definitions))
    elif flags.definitions.selects:
        raise UsageError(SELECTION_ONLY)
    paths = tuple(str(p.resolve()) for p in flags.definitions.paths or ())
    return settle(BisectRequest(
        flags.good, flags.bad, build.repo, flags.series, flags.metric, flags.measure,
        flags.runs, flags.max_runs, flags.config, flags.tool, flags.store.results_dir,
        flags.label, flags.seed, flags.resume, effect, plans_of(planned), paths,
        refusals_of(planned), build, store_request(flags.store, live=True), flags.output))


def change_point_base(*, config: Path | None, runs: int | None, max_runs: int | None,
                      build: BuildFlags, store: StoreFlags) -> BisectRequest:
    """`kvperf regressions --bisect`: what every change point's bisection shares (timing,
    the flags' config, runs and budget), checked before the history is read."""
    checked = build_request(build)
    base = BisectRequest("", "", checked.repo, runs=runs, max_runs=max_runs, config=config,
                         results_dir=store.results_dir, build=checked,
                         store=store_request(store, live=True))
    settle(BisectRequest("", "", checked.repo, measure=Measure.TIMING, runs=runs,
                         max_runs=max_runs))
    return base
