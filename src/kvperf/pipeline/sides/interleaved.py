"""compare, noise and run --commits as workflows: the sides built (pipeline/run/builds.py) or
given, every side prepared (exit 2 first), then run interleaved — here or on --server-host —
with the live store and one logs.txt beside the sides (pipeline/sides/sides.py runs them). The
CLI passes its request and its hooks (progress, build lines) and renders the result."""

from __future__ import annotations

import contextlib
from typing import Protocol

from kvperf.core.errors import BuildError
from kvperf.pipeline.request.common import RemoteRequest, StoreRequest
from kvperf.pipeline.request.run import CommitsRequest
from kvperf.pipeline.request.sides import CompareRequest, NoiseRequest, SidesRequest
from kvperf.pipeline.run.builds import BuildObserver, build_refs
from kvperf.pipeline.run.logs import log_to
from kvperf.pipeline.run.model import Observer
from kvperf.pipeline.run.storage import live_store
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.sides import (
    PreparedSides,
    Side,
    prepare_sides,
    ref_side_name,
    run_sides,
    side_from_build,
    side_name,
)
from kvperf.pipeline.world import World


class SidesHooks(BuildObserver, Protocol):
    def planned(self, plan: PreparedSides) -> None: ...

    def progress(self, trials: int) -> contextlib.AbstractContextManager[Observer]: ...


Interleaved = tuple[SidesResult, PreparedSides]


def run_interleaved(request: SidesRequest, sides: list[Side], store: StoreRequest,
                    remote: RemoteRequest | None, world: World, hooks: SidesHooks
                    ) -> Interleaved:
    """Prepare every side (all input checks first), then run them interleaved, rows going
    to the database as they finish (SidesResult.check_store says whether all arrived)."""
    plan = prepare_sides(request, sides)
    log_to(plan.out_dir, echo="WARNING")  # one logs.txt beside the sides
    hooks.planned(plan)
    with (world.servers(remote) as launcher, live_store(store, world) as writer,
          hooks.progress(plan.trials) as observer):
        result = run_sides(plan, observer, writer, launcher)
    return result, plan


def compare_sides(request: CompareRequest, world: World, hooks: BuildObserver) -> list[Side]:
    """The refs built as A and B, or the server binaries as A, B, C …"""
    if request.build is not None:
        a, b = build_refs(request.build, list(request.refs), world, hooks)
        return [side_from_build("A", a), side_from_build("B", b)]
    if request.clients:  # one server (the default, or --server-bin), a client per side
        server = request.server_bins[0] if request.server_bins else None
        return [Side(side_name(n), server, label=client, client=client)
                for n, client in enumerate(request.clients)]
    return [Side(side_name(n), path) for n, path in enumerate(request.server_bins)]


def compare(request: CompareRequest, world: World, hooks: SidesHooks) -> Interleaved:
    """`kvperf compare` (without --definitions: pipeline/definitions/definition_runs.py)."""
    return run_interleaved(request.sides, compare_sides(request, world, hooks), request.store,
                           request.remote, world, hooks)


def noise(request: NoiseRequest, world: World, hooks: SidesHooks) -> Interleaved:
    """`kvperf noise`: one server (a binary, or a ref built once; BuildError, exit 1, if it
    does not build) as sides A and B."""
    if request.build is not None and request.commit is not None:
        (build,) = build_refs(request.build, [request.commit], world, hooks)
        if not build.ok:
            raise BuildError(build.error or f"build of {request.commit} failed")
        sides = [side_from_build("A", build), side_from_build("B", build)]
    else:
        sides = [Side("A", request.server_bin), Side("B", request.server_bin)]
    return run_interleaved(request.sides, sides, request.store, request.remote, world, hooks)


def run_commits(request: CommitsRequest, world: World, hooks: SidesHooks
                ) -> Interleaved | None:
    """`kvperf run --commits`: every ref built (a failed build is a blocked side), then run
    interleaved; None with --dry-run (the builds only)."""
    builds = build_refs(request.build, list(request.refs), world, hooks)
    taken: set[str] = set()
    sides = [side_from_build(ref_side_name(b.ref, b.sha, taken), b) for b in builds]
    if request.dry_run:
        return None
    return run_interleaved(request.sides, sides, request.store, request.remote, world, hooks)
