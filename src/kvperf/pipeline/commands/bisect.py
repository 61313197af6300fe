"""`kvperf bisect GOOD BAD` and the bisections of `kvperf regressions --bisect`: the
question (series, metric, measure, runs, budget, --min-effect, definitions), how commits
are built and where the batches' rows go, checked before any fetch or build."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kvperf.analysis.verdict import Verdict
from kvperf.clients.checkout import repo_for
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan, Refusal, plans_of, refusals_of
from kvperf.pipeline.bisect import BisectResult, run_bisect, settle
from kvperf.pipeline.client_bisect import run_client_bisect
from kvperf.pipeline.commands.checks import (
    build_request,
    min_effect,
    plan_definitions,
    runnable,
    snapshot_cache,
    store_request,
)
from kvperf.pipeline.commands.outputs import write_report
from kvperf.pipeline.definitions.definition_runs import Refused
from kvperf.pipeline.module_bisect import ModuleBisectHooks, run_module_bisect
from kvperf.pipeline.request.bisect import BisectFlags, BisectRequest
from kvperf.pipeline.request.common import SELECTION_ONLY
from kvperf.pipeline.request.module_sides import ModuleSidesRequest
from kvperf.pipeline.request.options import NO_SNAPSHOTS
from kvperf.pipeline.world import World
from kvperf.report.bisect import markdown


def bisect_request(flags: BisectFlags) -> BisectRequest:
    """Every check of `kvperf bisect` that needs no repository (UsageError, exit 2); the
    plan's series and GOOD..BAD are checked first thing by the workflow, before any build."""
    build = None if flags.client else build_request(flags.build)
    effect = None if flags.min_effect is None else min_effect(flags.min_effect)
    planned: tuple[Plan | Refusal, ...] = ()
    if flags.definitions.given:
        planned = runnable(plan_definitions(flags.definitions))
    elif flags.definitions.selects:
        raise UsageError(SELECTION_ONLY)
    paths = tuple(str(p.resolve()) for p in flags.definitions.paths or ())
    repo = build.repo if build is not None else _client_repo(flags)
    return settle(BisectRequest(
        flags.good, flags.bad, repo, flags.series, flags.metric,
        Measure.TIMING if flags.client else flags.measure,
        flags.runs, flags.max_runs, flags.config, flags.tool, flags.store.results_dir,
        flags.label, flags.seed, flags.resume, effect, plans_of(planned), paths,
        refusals_of(planned), build, store_request(flags.store, live=True), flags.output,
        flags.client, flags.clients_dirs,
        snapshot_cache(flags.definitions) if flags.definitions.given else NO_SNAPSHOTS))


def _client_repo(flags: BisectFlags) -> str:
    """bisect --client NAME: GOOD and BAD are refs of the library's --client-repo; the
    harness is timed (no --definitions, no --measure instructions)."""
    name = flags.client or ""
    if "@" in name or ":" in name:
        raise UsageError(f"bisect --client {name}: give the client's name alone (GOOD and "
                         "BAD are the library's refs; the model comes from the config)")
    for flag, given in (("--definitions", flags.definitions.given),
                        ("--measure instructions", flags.measure == Measure.INSTRUCTIONS),
                        ("--tool", flags.tool is not None)):
        if given:
            raise UsageError(f"{flag} does not apply with bisect --client (the harness runs "
                             "the config's matrix, timed)")
    return repo_for(name, flags.client_repos)


class BisectCommandHooks(ModuleBisectHooks, Protocol):
    """What a bisection reports while it works (builds, steps, refused tests)."""

    def refused(self, refused: Refused) -> None: ...


@dataclass(frozen=True)
class Bisected:
    """A bisection's result; ``undecided``: why GOOD and BAD could not be bisected (they
    do not differ, or could not be told apart), else None; ``report``: --output, written."""

    result: BisectResult
    undecided: str | None = None
    report: Path | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.undecided is not None else 0


def bisect(request: BisectRequest, modules: ModuleSidesRequest | None, world: World,
           hooks: BisectCommandHooks) -> Bisected:
    """`kvperf bisect`: the server's commits, or with ``modules`` a module's on one server."""
    hooks.refused(request.refused)
    if modules is not None:
        result = run_module_bisect(request, modules, world, hooks)
    elif request.client is not None:
        result = run_client_bisect(request, request.client, request.clients_dirs, world, hooks)
    else:
        result = run_bisect(request, world, hooks)
    if not result.differ:
        return Bisected(result, _undecided(result))
    return Bisected(result, report=write_report(
        request.output, lambda: markdown(result.log, result.moved)))


def _undecided(result: BisectResult) -> str:
    log = result.log
    e = log.steps[0].effect(log.series) if log.steps else None
    why = f"{e.verdict}: {e.reason}" if e else "no result"
    what = ("do not differ" if e and e.verdict is Verdict.NO_CHANGE
            else f"could not be told apart within {log.max_runs} runs per side")
    return f"GOOD and BAD {what} on {log.series} {log.metric} ({why})"
