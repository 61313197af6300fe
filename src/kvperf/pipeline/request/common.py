"""Request pieces several commands share, each checked once: builds (--repo, --make-args,
--build-jobs, --build-cache), the store (--db, --no-db, --db-timeout), ``--server-host``
and its limits, the definitions selection, --runs, --min-effect, --water-line and what
disturbed trials get (--retry-disturbed, --exclude-disturbed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.server.remote import DEFAULT_PORTS, SshTarget
from kvperf.sourcebuild.builder import DEFAULT_MAKE_ARGS
from kvperf.store.db import DatabaseUrl, redact

INSTRUCTION_RUNS = 2  # default rounds of an interleaved run counting instructions
MEMORY_KEYS = 100_000  # default --keys of --measure memory
MEMORY_RUNS = 1  # default rounds of --measure memory (memory repeats to the byte)


@dataclass(frozen=True)
class BuildFlags:
    """The build flags as given."""

    repo: str | None = None
    make_args: str = " ".join(DEFAULT_MAKE_ARGS)
    jobs: int | None = None
    cache: Path | None = None


@dataclass(frozen=True)
class BuildRequest:
    """What refs are built from and how: repository, make arguments, make -j, the cache."""

    repo: str
    make_args: tuple[str, ...]
    jobs: int | None
    cache: Path


@dataclass(frozen=True)
class StoreFlags:
    """The store flags as given (commands without --no-db or --db-timeout leave them)."""

    db: str | None = None
    results_dir: Path = Path("results")
    no_db: bool = False
    timeout: float | None = None


@dataclass(frozen=True)
class StoreRequest:
    """The database (None: --no-db, metrics.json only) and, for the live writer of a run,
    the bound on each write (store/deadline.py)."""

    url: DatabaseUrl | None
    timeout: float | None = None

    @property
    def name(self) -> str:
        """The database for messages, credentials redacted."""
        return redact(self.url) if self.url is not None else "no database"


@dataclass(frozen=True)
class RemoteFlags:
    """``--server-host`` and its options as given."""

    host: str | None = None
    ssh_config: Path | None = None
    server_bin: str | None = None  # --remote-server-bin
    ports: str | None = None  # --remote-ports LO-HI


@dataclass(frozen=True)
class RemoteRequest:
    """Each trial's server on another host over SSH (server/remote.py)."""

    target: SshTarget
    ssh_config: Path | None = None
    server_bin: str | None = None  # a path there instead of a copy of the local binary
    ports: tuple[int, int] = DEFAULT_PORTS


@dataclass(frozen=True)
class DefinitionFlags:
    """``--definitions PATH…`` and the corpus runner's selection flags, as given."""

    paths: tuple[Path, ...] | None = None  # None: no --definitions
    tests_regexp: str = ".*"
    priority_lower: int | None = None
    priority_upper: int | None = None
    tested_groups: tuple[str, ...] | None = None
    tested_commands: tuple[str, ...] | None = None
    topologies: tuple[str, ...] | None = None
    override_test_time: int | None = None
    cap_request_bound: bool = False  # request-bound memtier clients end at the override too
    ignore_resources: bool = False  # plan what does not fit this machine's memory
    no_snapshots: bool = False  # run --definitions: every preload for real
    no_server_reuse: bool = False  # run --definitions: a fresh server for every test
    snapshot_cache: Path | None = None  # run --definitions: the snapshot cache's directory
    dataset_rdbs: tuple[str, ...] = ()  # run --definitions --dataset-rdb NAME=PATH

    @property
    def given(self) -> bool:
        return self.paths is not None

    @property
    def selects(self) -> bool:
        """Whether a selection flag was given (they apply only with --definitions)."""
        return self.tests_regexp != ".*" or any(value is not None for value in (
            self.priority_lower, self.priority_upper, self.tested_groups,
            self.tested_commands, self.topologies, self.override_test_time)) \
            or self.ignore_resources or self.cap_request_bound


SELECTION_ONLY = ("the definition selection flags (--tests-regexp, --topologies, "
                  "--override-test-time, --ignore-resources …) apply only with --definitions")


@dataclass(frozen=True)
class InterferenceFlags:
    """--retry-disturbed / --no-retry-disturbed (None: the command's default) and
    --exclude-disturbed, as given."""

    retry: bool | None = None
    exclude: bool = False

    @property
    def given(self) -> bool:
        return self.retry is not None or self.exclude


@dataclass(frozen=True)
class RateSweepFlags:
    """The sweep's flags as given."""

    given: bool = False  # --rate-sweep
    rates: str | None = None  # --rates 10000,50000
    steps: str | None = None  # --rate-steps 10,50,90 (percent of saturation)
    point_seconds: int | None = None
    slo: str | None = None
    factor: float | None = None
    arrivals: str | None = None

    def details(self) -> list[str]:
        """The sub-flags given (each needs --rate-sweep)."""
        named = (("--rates", self.rates), ("--rate-steps", self.steps),
                 ("--point-seconds", self.point_seconds), ("--slo", self.slo),
                 ("--knee-factor", self.factor), ("--arrivals", self.arrivals))
        return [flag for flag, value in named if value is not None]
