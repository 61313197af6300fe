"""`kvperf bisect GOOD BAD` and the bisections of `kvperf regressions --bisect`: the
question (series, metric, measure, runs, budget, --min-effect, definitions), how commits
are built and where the batches' rows go, checked before any fetch or build."""

from __future__ import annotations

from kvperf.core.errors import UsageError
from kvperf.definitions.plan import Plan, Refusal, plans_of, refusals_of
from kvperf.pipeline.bisect import settle
from kvperf.pipeline.commands.checks import (
    build_request,
    min_effect,
    plan_definitions,
    runnable,
    store_request,
)
from kvperf.pipeline.request.bisect import BisectFlags, BisectRequest
from kvperf.pipeline.request.common import SELECTION_ONLY


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
