"""``kvperf bisect GOOD BAD --module-repo R --module-config FILE``: the bisection of
pipeline/bisect.py (its search, log, batches and --resume) over a module's commits, each
built by the module builder and run as module scenarios on the one fixed server.

``ModuleBench`` is the bisection's Bench: a commit's build is the module's (its ``.so``
stands where a server build's binary would, ``Side.server_bin``), a batch is GOOD's and the
commit's module sides interleaved (pipeline/module_sides.py). The series is a scenario's
(``bf-add P=16 c=4``); bisect measures timing here (default metric rps; the scenario's
``server.usec_per_call`` is the sharper one on a loaded machine)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Protocol, cast

from kvperf.analysis.bisect import pick_series
from kvperf.analysis.comparison import GroupKey, describe_group, group_key
from kvperf.core.errors import UsageError
from kvperf.core.jsontypes import JsonObject
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan
from kvperf.pipeline.bisect import (
    BisectHooks,
    Bisection,
    BisectResult,
    bisect_dir,
    new_log,
    open_log,
    settle,
)
from kvperf.pipeline.module_sides import (
    ModuleSidesHooks,
    SideBatch,
    build_modules,
    interleave_batches,
)
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.module_sides import ModuleSidesRequest
from kvperf.pipeline.request.options import ModuleOptions
from kvperf.pipeline.request.sides import SidesRequest
from kvperf.pipeline.run.modules import prepare_modules
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.sides import Side
from kvperf.pipeline.world import World
from kvperf.results.row import Row
from kvperf.sourcebuild import git as mirrors
from kvperf.sourcebuild.builder import Build
from kvperf.sourcebuild.git_log import CommitInfo


class ModuleBisectHooks(BisectHooks, ModuleSidesHooks, Protocol):
    pass


class ModuleBench:
    """The bisection's Bench over a module repository (module doc)."""

    def __init__(self, sides: ModuleSidesRequest, world: World,
                 hooks: ModuleBisectHooks) -> None:
        self.sides, self.world, self.hooks = sides, world, hooks
        self.builder = sides.source.builder()
        self.results: list[SidesResult] = []

    def resolve(self, ref: str) -> str:
        with self.hooks.fetching(self.sides.source.repo):
            return self.builder.resolve(ref)

    def commits(self, good: str, bad: str) -> list[CommitInfo]:
        return mirrors.first_parent_range(self.builder.mirror(), good, bad)

    def build(self, sha: str) -> Build:
        (done,) = build_modules(self.sides.source, [sha], self.hooks)
        return done.as_build("commit")

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult:
        batches = {side.name: self._batch(request, side) for side in sides}
        seed = request.seed if request.seed is not None else \
            random.SystemRandom().randrange(2**31)
        labels = {side.name: side.label or side.name for side in sides}
        result = interleave_batches(batches, seed, labels, self.sides, self.world, self.hooks)
        self.results.append(result)
        return result

    def _batch(self, request: SidesRequest, side: Side) -> SideBatch:
        options = self.sides.options
        module = (Path(side.server_bin),) if side.server_bin else ()
        run = prepare_modules(replace(options, module_paths=options.module_paths + module,
                                      label=side.name, results_dir=request.out_dir))
        module_env: JsonObject = {"repo": self.sides.source.repo, "commit": side.commit,
                                  "artifact": side.server_bin}
        env = {**run.context.env, "module": module_env}
        run = replace(run, context=replace(run.context, commit=side.commit, env=env))
        return SideBatch(run, request.runs, side.blocked)

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult:
        raise UsageError("bisect --module-repo runs module scenarios, not --definitions")

    def check_stores(self) -> None:
        for done in self.results:
            done.check_store()


def module_series(options: ModuleOptions) -> list[GroupKey]:
    """The series the selected scenarios' rows will have, in plan order."""
    run = prepare_modules(options)
    return list(dict.fromkeys(group_key(cast(Row, work.series())) for work in run.works()))


def run_module_bisect(request: BisectRequest, sides: ModuleSidesRequest, world: World,
                      hooks: ModuleBisectHooks) -> BisectResult:
    """Every check first (exit 2), then the bisection (pipeline/bisect.Bisection)."""
    if request.measure not in (None, Measure.TIMING):
        raise UsageError("bisect --module-repo measures timing (compare and run --commits "
                         "--module-repo count instructions; bisect does not yet)")
    request = settle(replace(request, measure=Measure.TIMING, repo=sides.source.repo))
    series = describe_group(pick_series(request.series, module_series(sides.options)))
    bench = ModuleBench(sides, world, hooks)
    wanted = new_log(request, series, bench)
    directory = bisect_dir(request, wanted)
    log = open_log(request, wanted, directory)
    result = Bisection(request, log, directory, bench, hooks).run()
    bench.check_stores()
    return result
