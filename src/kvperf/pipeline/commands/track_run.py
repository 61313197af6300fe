"""`kvperf track run`: a runner's loop over definition-shard jobs (``track determine
--definitions``). Claim one (``FOR UPDATE SKIP LOCKED``, a lease), keep its lease alive
from a heartbeat thread while it runs, run its files as ``run --definitions FILES`` does
(in-process, every row stored live with the job's commit), mark it, claim the next, until
the queue has none. The server is ``--server-bin`` or the job's commit built from the
job's repository (cached builds). A job whose tests ran is complete, even when some failed
or broke a KPI (those are results: ``report --definitions`` shows them), its refusals kept
as the job's note; a job that could not run (no server, no file, nothing runnable) is
failed with the reason and retried up to its cap; a job whose every test the definitions
stage refuses (the same on every runner) is complete, its refusals its note. A runner
killed mid-job leaves a lease that expires: another runner takes the job again
(store/track.py)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kvperf.core.errors import Interrupted, KvperfError, StoreError, UsageError
from kvperf.definitions.plan import Plan, Refusal, refusals_of
from kvperf.pipeline.commands.checks import (
    build_request,
    plan_definitions,
    snapshot_cache,
    store_request,
)
from kvperf.pipeline.commands.definitions import run_definitions
from kvperf.pipeline.definitions.definition_runs import DefinitionHooks, Refused
from kvperf.pipeline.definitions.definition_sides import DefinitionSides
from kvperf.pipeline.request.common import BuildFlags, DefinitionFlags, StoreFlags
from kvperf.pipeline.request.options import DefinitionOptions
from kvperf.pipeline.request.run import DefinitionsRequest
from kvperf.pipeline.request.stored import TrackRunRequest
from kvperf.pipeline.run.builds import BuildObserver, build_one
from kvperf.pipeline.run.model import Observer
from kvperf.pipeline.world import World
from kvperf.store import corpus, track
from kvperf.store.db import Database
from kvperf.store.track import COMPLETE, FAILED, Job


def track_run_request(*, runner: str, lease: float, architecture: str | None, corpus: Path,
                      server_bin: str | None, build: BuildFlags, results_dir: Path,
                      max_jobs: int | None, ignore_resources: bool, store: StoreFlags,
                      wait: bool = False) -> TrackRunRequest:
    if not runner:
        raise UsageError("--runner must name this runner")
    if lease <= 0:
        raise UsageError(f"--lease must be positive, got {lease}")
    if max_jobs is not None and max_jobs < 1:
        raise UsageError(f"--max-jobs must be at least 1, got {max_jobs}")
    if not corpus.is_dir():
        raise UsageError(f"--corpus {str(corpus)!r} is not a directory: give the corpus root "
                         "the jobs' definition files are relative to")
    return TrackRunRequest(runner, lease, architecture, corpus.resolve(), server_bin, build,
                           results_dir, max_jobs, ignore_resources,
                           store_request(store, live=True), wait)


class TrackRunHooks(DefinitionHooks, BuildObserver, Protocol):
    def claimed(self, job: Job, files: tuple[str, ...]) -> None: ...

    def marked(self, done: JobDone) -> None: ...


@dataclass(frozen=True)
class JobDone:
    """One job run: how it was marked (or ``lost``: its lease was taken over), why."""

    job: Job
    outcome: str
    note: str | None
    lost: bool = False


class _Heartbeat:
    """Renews the job's lease every third of it from a thread, fenced by the attempt; stops
    (``lost``) when the job was taken over."""

    def __init__(self, engine: Database, job: Job, lease: float) -> None:
        self.engine, self.job, self.lease = engine, job, lease
        self.stop = threading.Event()
        self.lost = False
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while not self.stop.wait(self.lease / 3):
            try:
                track.renew(self.engine, self.job.id, self.lease, attempt=self.job.attempts)
            except StoreError:
                self.lost = True
                return

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


class _Recorded:
    """The hooks, with the tests the run refused recorded for the job's note."""

    def __init__(self, hooks: DefinitionHooks) -> None:
        self.hooks = hooks
        self.notes: list[str] = []

    def refused(self, refused: Refused) -> None:
        self.notes += [f"refused {name} [{topology}]: {why}" for name, topology, why in refused]
        self.hooks.refused(refused)

    def tests(self) -> Observer:
        return self.hooks.tests()

    def sides_planned(self, prepared: DefinitionSides, sides: int) -> None:
        self.hooks.sides_planned(prepared, sides)


def track_run(request: TrackRunRequest, world: World, hooks: TrackRunHooks) -> list[JobDone]:
    """Claim and run definition-shard jobs until none is left (or ``max_jobs`` ran)."""
    assert request.store.url is not None
    done: list[JobDone] = []
    with world.database(request.store.url) as engine:
        while request.max_jobs is None or len(done) < request.max_jobs:
            job = _next(request, engine)
            if job is None:
                break
            done.append(_run_job(request, world, hooks, engine, job))
            hooks.marked(done[-1])
    return done


def _next(request: TrackRunRequest, engine: Database) -> Job | None:
    """The next job claimed; with ``wait``, while other runners hold jobs, claims again
    every few seconds (a held job whose runner died is claimable once its lease expires)."""
    while True:
        job = track.claim(engine, request.runner, request.lease, request.architecture,
                          definitions_only=True)
        if job is not None or not request.wait or \
                not track.definitions_in_progress(engine, request.architecture):
            return job
        time.sleep(min(2.0, request.lease / 3))


def _run_job(request: TrackRunRequest, world: World, hooks: TrackRunHooks, engine: Database,
             job: Job) -> JobDone:
    payload = track.definitions_job(job.config_content)
    assert payload is not None, "claim(definitions_only=True) gave another kind of job"
    hooks.claimed(job, payload.files)
    recorded = _Recorded(hooks)
    with _Heartbeat(engine, job, request.lease) as beat:
        try:
            _execute(request, world, hooks, recorded, (engine, job), payload)
            outcome, note = COMPLETE, "\n".join(recorded.notes) or None
        except Interrupted as exc:  # failed now (claimable again at once), then stop
            _mark(engine, job, FAILED, f"runner {request.runner}: {exc}")
            raise
        except KvperfError as exc:
            outcome, note = FAILED, "\n".join([*recorded.notes, str(exc)])
    lost = beat.lost or not _mark(engine, job, outcome, note)
    return JobDone(job, outcome, note, lost=lost)


def _mark(engine: Database, job: Job, outcome: str, note: str | None) -> bool:
    """Mark the job at its claim's attempt; False when another runner took it over."""
    try:
        track.mark(engine, job.id, outcome, note, attempt=job.attempts)  # type: ignore[arg-type]
    except StoreError:
        return False
    return True


def _server(request: TrackRunRequest, world: World, hooks: BuildObserver, job: Job) -> str:
    """--server-bin, else the job's commit built from its repository (BuildError)."""
    if request.server_bin is not None:
        return request.server_bin
    build = build_request(BuildFlags(job.repo, request.build.make_args, request.build.jobs,
                                     request.build.cache))
    built = build_one(world.builder(build), job.sha, job.sha, hooks)
    if not built.ok or built.server_bin is None:
        raise KvperfError(f"commit {job.sha[:12]} did not build: {built.error}")
    return str(built.server_bin)


def _resumed(engine: Database, job: Job, planned: tuple[Plan | Refusal, ...],
             recorded: _Recorded) -> tuple[Plan | Refusal, ...]:
    """A job claimed again (its runner died or its lease expired): the tests an earlier
    attempt already stored for the commit are not run again."""
    if job.attempts < 2:
        return planned
    stored = {(str(d.get("name")), str(d.get("topology")))
              for r in corpus.definition_rows(engine, job.sha)
              if (d := r.get("definition") or {})}
    left = tuple(p for p in planned
                 if isinstance(p, Refusal) or (p.name, p.topology.name) not in stored)
    skipped = len(planned) - len(left)
    if skipped:
        recorded.notes.append(f"attempt {job.attempts}: {skipped} test(s) stored by an "
                              "earlier attempt not run again")
    return left


def _execute(request: TrackRunRequest, world: World, hooks: TrackRunHooks,
             recorded: _Recorded, claimed: tuple[Database, Job],
             payload: track.DefinitionsJob) -> None:
    engine, job = claimed
    files = tuple(request.corpus / f for f in payload.files)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"definition file(s) not in the corpus {request.corpus}: "
                         f"{', '.join(missing)}")
    flags = DefinitionFlags(files, payload.tests_regexp, topologies=payload.topologies,
                            override_test_time=payload.override_test_time,
                            cap_request_bound=payload.cap_request_bound,
                            ignore_resources=request.ignore_resources)
    planned = _resumed(engine, job, plan_definitions(flags), recorded)
    if not any(isinstance(p, Plan) for p in planned):
        # every test refused by the definitions stage (the same on any runner: kept as the
        # job's note, not retried) or stored by an earlier attempt
        recorded.refused(refusals_of(planned))
        return
    # a shard shares its preload: the runner's snapshot cache
    options = DefinitionOptions(request.results_dir, f"{job.sha[:12]}-job{job.id}",
                                _server(request, world, hooks, job), commit=job.sha,
                                snapshots=snapshot_cache(flags))
    done = run_definitions(DefinitionsRequest(planned, options, request.store), world,
                           recorded)
    if done.ran is not None and done.ran.summary is None:
        raise Interrupted("interrupted; the tests it finished are stored")
