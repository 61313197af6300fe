"""Building what a command runs, through World.builder / World.tree_builder: refs of a
repository (every ref resolved first, so a bad ref costs no build; each commit built once)
and a --valkey-path tree in place; progress goes to a BuildObserver."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Protocol

from kvperf.core.errors import BuildError
from kvperf.core.proc import LineSink
from kvperf.pipeline.request.common import BuildRequest
from kvperf.pipeline.world import Builds, World
from kvperf.sourcebuild.builder import Build


class BuildObserver(Protocol):
    def fetching(self, repo: str) -> contextlib.AbstractContextManager[object]: ...

    def building(self, ref: str, sha: str, make: str
                 ) -> contextlib.AbstractContextManager[LineSink]: ...

    def built(self, build: Build, cached: bool) -> None: ...

    def checking(self, tree: Path) -> contextlib.AbstractContextManager[LineSink]: ...

    def tree_built(self, tree: Path, build: Build) -> None: ...


def build_refs(request: BuildRequest, refs: list[str], world: World,
               observer: BuildObserver) -> list[Build]:
    """Resolve every ref first (bad refs → exit 2 before any build), then build each."""
    builder = world.builder(request)
    with observer.fetching(builder.repo):
        shas = [builder.resolve(ref) for ref in refs]
    builds: dict[str, Build] = {}
    for ref, sha in zip(refs, shas, strict=True):
        if sha not in builds:
            builds[sha] = build_one(builder, ref, sha, observer)
    return [builds[sha] for sha in shas]


def build_one(builder: Builds, ref: str, sha: str, observer: BuildObserver) -> Build:
    """One commit built (or its cached build); a failure is the Build's error."""
    if builder.cached(sha):
        build = builder.build(ref, sha)
        observer.built(build, cached=True)
        return build
    make = " ".join(["make", f"-j{builder.jobs}", *builder.make_args])
    with observer.building(ref, sha, make) as on_line:
        build = builder.build(ref, sha, on_line)
    observer.built(build, cached=False)
    return build


def build_tree(tree: Path, request: BuildRequest, world: World,
               observer: BuildObserver) -> Build:
    """--valkey-path without binaries: the tree built in place (BuildError, exit 1)."""
    with observer.checking(tree) as on_line:
        build = world.tree_builder(tree, request, on_line)
    if not build.ok:
        raise BuildError(build.error or f"build of {tree} failed")
    observer.tree_built(tree, build)
    return build
