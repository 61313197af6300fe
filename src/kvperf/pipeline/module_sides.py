"""Module builds as sides: ``compare A B --module-repo R`` and ``run --commits … --module-repo
R`` — the module built at each ref (sourcebuild/module_builder.py), every side running the
same module scenarios on one fixed server binary, interleaved by the one interleaver
(pipeline/sides/ab.interleave) in rounds, each row persisted as it finishes.

Every check comes first (exit 2 before any build or server): the refs resolve, a recipe is
found at each, its placeholders can be filled. A glob that names no single ``.so`` after a
build is exit 2 too, before any server starts. A failed build blocks only its side: its rows
are failed rows carrying the compiler's first error. Each row's ``commit`` is the module's
commit; ``env.module`` records the repository, ref, commit, recipe and artifact, beside
``env.server_binary`` and the server's version (``server_version``)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from kvperf.core.errors import BuildError
from kvperf.core.kinds import Schedule
from kvperf.pipeline.request.module_sides import ModuleSidesRequest, ModuleSource
from kvperf.pipeline.run.builds import BuildObserver, build_refs
from kvperf.pipeline.run.model import Observer
from kvperf.pipeline.run.modules import ModuleRun, ScenarioWork, prepare_modules
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.run.storage import live_store
from kvperf.pipeline.sides.ab import SidesResult, interleave
from kvperf.pipeline.world import World
from kvperf.sourcebuild.module_builder import ModuleBuild


class ModuleSidesHooks(BuildObserver, Protocol):
    def module_built(self, build: ModuleBuild) -> None: ...

    def progress(self, trials: int) -> contextlib.AbstractContextManager[Observer]: ...


@dataclass
class SideBatch:
    """One side's works: the scenarios of ``run`` in ``runs`` rounds (a fresh server per
    group and round); ``reason`` blocks the side (its module did not build)."""

    run: ModuleRun
    runs: int
    reason: str | None = None

    @property
    def out_dir(self) -> Path:
        return self.run.out_dir

    @property
    def blocked(self) -> str | None:
        return self.reason

    def works(self) -> Sequence[ScenarioWork]:
        once = self.run.works()
        return [replace(w, round=r, log_dir=w.log_dir / f"run{r}")
                for r in range(1, self.runs + 1) for w in once]


@dataclass
class ModuleSides:
    builds: dict[str, ModuleBuild]
    batches: dict[str, SideBatch]
    result: SidesResult
    out_dir: Path


def side_names(refs: Sequence[str]) -> list[str]:
    """A and B for two refs (compare); the refs themselves, made unique, for more."""
    if len(refs) == 2:
        return ["A", "B"]
    taken: dict[str, int] = {}
    names = []
    for ref in refs:
        base = "".join(c if c.isalnum() or c in "._-" else "_" for c in ref)[:40] or "ref"
        taken[base] = taken.get(base, 0) + 1
        names.append(base if taken[base] == 1 else f"{base}-{taken[base]}")
    return names


def build_modules(source: ModuleSource, refs: Sequence[str], hooks: ModuleSidesHooks
                  ) -> list[ModuleBuild]:
    """Every ref resolved and its recipe found first (UsageError, exit 2), then built."""
    builder = source.builder()
    with hooks.fetching(source.repo):
        shas = [builder.resolve(ref) for ref in refs]
    recipes = [builder.recipe(ref, sha) for ref, sha in zip(refs, shas, strict=True)]
    done: dict[str, ModuleBuild] = {}
    for ref, sha, recipe in zip(refs, shas, recipes, strict=True):
        if sha not in done:
            if builder.cached(sha, recipe):
                done[sha] = builder.build(ref, sha)
            else:
                with hooks.building(ref, sha, recipe.command) as on_line:
                    done[sha] = builder.build(ref, sha, on_line)
            hooks.module_built(done[sha])
    return [replace(done[sha], ref=ref) for ref, sha in zip(refs, shas, strict=True)]


def _side(request: ModuleSidesRequest, name: str, build: ModuleBuild) -> SideBatch:
    options = request.options
    paths = options.module_paths + ((build.artifact,) if build.artifact else ())
    run = prepare_modules(replace(options, module_paths=paths, label=name,
                                  results_dir=request.out_dir))
    env = {**run.context.env, "module": build.provenance(request.source.repo)}
    if request.server_commit is not None:
        env["server_commit"], env["server_ref"] = request.server_commit, request.server_ref
    run = replace(run, context=replace(run.context, commit=build.sha, env=env))
    return SideBatch(run, request.runs, None if build.ok else build.error)


def prepare_module_sides(request: ModuleSidesRequest, hooks: ModuleSidesHooks
                         ) -> tuple[dict[str, ModuleBuild], dict[str, SideBatch]]:
    builds = build_modules(request.source, request.refs, hooks)
    names = side_names(request.refs)
    return (dict(zip(names, builds, strict=True)),
            {n: _side(request, n, b) for n, b in zip(names, builds, strict=True)})


def with_server_build(request: ModuleSidesRequest, world: World,
                      hooks: ModuleSidesHooks) -> ModuleSidesRequest:
    """``--repo R --server-ref REF``: the fixed server built first (an unknown ref is exit 2,
    a failed build BuildError, exit 1); its tree becomes ``{server_src}``."""
    if request.server_build is None or request.server_ref is None:
        return request
    (build,) = build_refs(request.server_build, [request.server_ref], world, hooks)
    if not build.ok or build.server_bin is None:
        raise BuildError(build.error or f"the server build of {request.server_ref} failed")
    tree = build.server_bin.parent.parent
    return replace(request, options=replace(request.options,
                                            server_bin=str(build.server_bin)),
                   source=replace(request.source, server_src=tree), server_commit=build.sha)


def run_module_sides(request: ModuleSidesRequest, world: World, hooks: ModuleSidesHooks
                     ) -> ModuleSides:
    """The workflow (module doc)."""
    request = with_server_build(request, world, hooks)
    builds, batches = prepare_module_sides(request, hooks)
    seed = request.seed if request.seed is not None else random.SystemRandom().randrange(
        2**31)
    labels = {n: f"{builds[n].ref} ({builds[n].sha[:12]})" for n in batches}
    result = interleave_batches(batches, seed, labels, request, world, hooks)
    return ModuleSides(builds, batches, result, request.out_dir)


def interleave_batches(batches: dict[str, SideBatch], seed: int, labels: dict[str, str],
                       request: ModuleSidesRequest, world: World, hooks: ModuleSidesHooks
                       ) -> SidesResult:
    """The sides' batches run by the one interleaver, rows to the live store as they end."""
    total = sum(len(b.works()) for b in batches.values())
    with (world.servers(None) as launcher, live_store(request.store, world) as writer,
          hooks.progress(total) as observer):
        runners = {n: Runner(b, observer, writer, launcher=launcher,
                             policy=request.interference) for n, b in batches.items()}
        return interleave(runners, seed, observer, Schedule.ALTERNATE, labels, writer)

