"""`kvperf track …`: commit tracking for runner fleets, a queue of (commit, config content,
architecture) jobs in the database (store/track.py holds the rules). ``determine`` records
the branch's last commits (git) and enqueues the missing jobs; ``claim`` takes one with a
lease, ``renew`` extends it, ``mark`` finishes it; ``query`` lists jobs and counts;
``cleanup`` requeues expired claims and deletes old completed rows. Each action opens the
database once (pipeline/read/stored.py); the determine and claim flags are checked before."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kvperf.clients.checkout import client_named
from kvperf.clients.manifest import discover, search_dirs, select
from kvperf.config.scenarios import is_module_config
from kvperf.core.errors import ConfigError, UsageError
from kvperf.definitions.plan import Plan
from kvperf.definitions.shards import shards
from kvperf.pipeline.commands.checks import plan_definitions, store_request
from kvperf.pipeline.read import stored
from kvperf.pipeline.request.common import DefinitionFlags, StoreFlags
from kvperf.pipeline.request.stored import (
    TrackClaimRequest,
    TrackCleanupRequest,
    TrackDetermineRequest,
    TrackMarkRequest,
    TrackQueryRequest,
    TrackRenewRequest,
    TrackStatusRequest,
)
from kvperf.pipeline.world import World
from kvperf.store import track
from kvperf.store.track import (
    COMPLETE,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    FAILED,
    STATES,
    Cleanup,
    Job,
)

__all__ = [
    "COMPLETE",
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_MAX_ATTEMPTS",
    "FAILED",
    "STATES",
    "Claimed",
    "Cleanup",
    "Determined",
    "Job",
    "Queried",
    "job_kind",
    "track_claim",
    "track_claim_request",
    "track_cleanup",
    "track_determine",
    "track_determine_request",
    "track_mark",
    "track_query",
    "track_renew",
    "track_status",
]


def job_kind(config_content: str | None, repo: str = "") -> str:
    """``definitions`` for a definition-shard job (``track determine --definitions``: run
    by ``track run``), ``client`` for a job of a library's commits (its repo is
    ``NAME=PATH``: run with ``run --client NAME@SHA --client-repo NAME=PATH``), ``module``
    for a job whose config is a module-test config (test_groups: its commits are a
    module's, run with ``run --commits SHA --module-repo REPO``), else ``server``."""
    if client_named(repo):
        return "client"
    if track.definitions_job(config_content) is not None:
        return "definitions"
    try:
        return "module" if is_module_config(json.loads(config_content or "")) else "server"
    except ValueError:
        return "server"


def track_determine_request(*, repo: str | None, branch: str, max_commits: int,
                            config: Path | None, architecture: str, max_attempts: int,
                            store: StoreFlags, module_repo: str | None = None,
                            client_repo: str | None = None, clients_dirs: tuple[Path, ...] = (),
                            definitions: DefinitionFlags | None = None,
                            corpus: Path = Path("."), shard_size: int = 8
                            ) -> TrackDetermineRequest:
    if sum(r is not None for r in (repo, module_repo, client_repo)) != 1:
        raise UsageError("give --repo R (server commits), --module-repo R (a module's "
                         "commits, run on a fixed server) or --client-repo NAME=R (a client "
                         "library's commits, run by its harness), one of them")
    if (config is None) == (definitions is None or not definitions.given):
        raise UsageError("give --config FILE (a benchmark config) or --definitions PATH… (a "
                         "corpus of definitions, one job per commit and shard), one of them")
    if config is None:
        assert definitions is not None
        if repo is None:
            raise UsageError("--definitions runs on the server's commits: give --repo R")
        shards = definition_shards(definitions, corpus, shard_size)
        return TrackDetermineRequest(repo, branch, max_commits, None, architecture,
                                     max_attempts, store_request(store), shards=shards)
    if client_repo is not None:
        _check_client_repo(client_repo, clients_dirs)
    tracked = _config(config)
    module = module_repo is not None
    if client_repo is not None and job_kind(tracked.content) == "module":
        raise UsageError(f"config {str(config)!r}: --client-repo tracks a benchmark config "
                         "(the harness runs its matrix); this one is a module-test config")
    if (job_kind(tracked.content) == "module") != module and client_repo is None:
        raise UsageError(f"config {str(config)!r}: " + (
            "--module-repo tracks a module-test config (test_groups); this one is a server "
            "benchmark config" if module else
            "a module-test config (test_groups) is tracked with --module-repo R"))
    return TrackDetermineRequest(module_repo or repo or client_repo or "", branch, max_commits,
                                 tracked, architecture, max_attempts, store_request(store),
                                 module)


def _config(config: Path) -> track.Config:
    try:
        content = config.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(config)!r}: {exc.strerror or exc}"
                          ) from None
    return track.config_from_text(config.name, content)


def definition_shards(flags: DefinitionFlags, corpus: Path, shard_size: int
                      ) -> tuple[track.Config, ...]:
    """The selected definitions planned, their files (relative to ``corpus``) grouped by
    the preload they plan (definitions/shards.py), each shard a job's payload."""
    if shard_size < 1:
        raise UsageError(f"--shard-size must be at least 1, got {shard_size}")
    root = corpus.resolve()
    if not root.is_dir():
        raise UsageError(f"--corpus {str(corpus)!r} is not a directory")
    by_file: dict[str, list[Plan]] = {}
    for planned in plan_definitions(flags):
        source = planned.definition.source.resolve()
        if not source.is_relative_to(root):
            raise UsageError(f"definition {str(planned.definition.source)!r} is not under "
                             f"--corpus {str(corpus)!r}: jobs name files relative to the "
                             "corpus root every runner is given")
        plans = by_file.setdefault(str(source.relative_to(root)), [])
        if isinstance(planned, Plan):
            plans.append(planned)
    return tuple(
        track.DefinitionsJob(shard.key, shard.files, flags.tests_regexp,
                             flags.override_test_time, flags.topologies,
                             flags.cap_request_bound).config()
        for shard in shards(list(by_file.items()), shard_size))


def _check_client_repo(value: str, dirs: tuple[Path, ...]) -> None:
    """--client-repo NAME=PATH: a known client whose harness can run its library at a
    commit (a ``checkout`` section)."""
    if not client_named(value):
        raise UsageError(f"--client-repo {value}: track names the library: NAME=PATH (e.g. "
                         "redis-py=../redis-py)")
    name = value.partition("=")[0]
    (manifest,) = select(discover(search_dirs(dirs)), [name])
    if manifest.checkout is None:
        raise UsageError(f"client {name} cannot run its library at a commit: its manifest "
                         "has no 'checkout' section (docs/CLIENTS.md)")


def track_claim_request(*, runner: str, lease: float, architecture: str | None, hold: float,
                        store: StoreFlags) -> TrackClaimRequest:
    if hold < 0:
        raise UsageError(f"--hold must be >= 0, got {hold}")
    return TrackClaimRequest(runner, lease, architecture, hold, store_request(store))


@dataclass(frozen=True)
class Determined:
    """The branch's last commits recorded (how many), the ids of the jobs newly enqueued."""

    commits: int
    enqueued: list[str]


def track_determine(request: TrackDetermineRequest, world: World) -> Determined:
    items, added = stored.track_determine(request, world)
    return Determined(len(items), added)


@dataclass(frozen=True)
class Claimed:
    """The job claimed (None: none left) and its kind, ``server`` or ``module``."""

    job: Job | None
    kind: str | None


def track_status(request: TrackStatusRequest, world: World) -> list[track.CorpusProgress]:
    """Per commit with definition-shard jobs: its jobs per state, whether all are done."""
    return stored.track_status(request, world)


def track_claim(request: TrackClaimRequest, world: World) -> Claimed:
    job = stored.track_claim(request, world)
    return Claimed(job, job_kind(job.config_content, job.repo) if job else None)


def track_mark(request: TrackMarkRequest, world: World) -> Job:
    """The claimed job finished as complete or failed (refused if claimed again since)."""
    return stored.track_mark(request, world)


def track_renew(request: TrackRenewRequest, world: World) -> Job:
    """The job with its lease extended."""
    return stored.track_renew(request, world)


@dataclass(frozen=True)
class Queried:
    """The jobs asked for, and the count of jobs per state."""

    jobs: list[Job]
    counts: dict[str, int]


def track_query(request: TrackQueryRequest, world: World) -> Queried:
    return Queried(*stored.track_query(request, world))


def track_cleanup(request: TrackCleanupRequest, world: World) -> Cleanup:
    """Expired claims requeued (or failed at the retry cap), old completed rows deleted."""
    return stored.track_cleanup(request, world)
