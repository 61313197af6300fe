"""The types of the interleaved commands: an interleaved run of sides over one plan
(``SidesRequest``, its config parsed once), `kvperf compare`'s flags and request (refs,
binaries or clients as sides, the verdict rule, --output), `kvperf noise`'s; the checks
are pipeline/commands/compare.py's and noise.py's."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.sequential import DEFAULT_MAX_ROUNDS as DEFAULT_MAX_ROUNDS  # --max-runs
from kvperf.analysis.sequential import MIN_ROUNDS as MIN_ROUNDS
from kvperf.analysis.sequential import Design
from kvperf.analysis.verdict import DEFAULT_RULE, DEFAULT_WATER_LINE, Rule
from kvperf.config.model import BenchmarkSpec, ProfileSettings
from kvperf.config.rate_sweep import RateSweep
from kvperf.core.kinds import Concurrency, Measure, Schedule
from kvperf.definitions.plan import Plan, Refusal
from kvperf.pipeline.request.common import (
    BuildFlags,
    BuildRequest,
    DefinitionFlags,
    InterferenceFlags,
    RateSweepFlags,
    RemoteFlags,
    RemoteRequest,
    StoreFlags,
    StoreRequest,
)
from kvperf.pipeline.request.options import NO_SNAPSHOTS, InterferencePolicy, Snapshots

COMPARE_RUNS = 8  # default interleaved rounds of compare
NOISE_RUNS = 6  # … of noise
AUTO = "auto"  # --runs auto


@dataclass(frozen=True)
class AutoRuns:
    """``--runs auto``: rounds added one at a time, each series until it is decided
    (``analysis.sequential``), judged by ``rule`` at the design's level over ``metrics``."""

    design: Design
    rule: Rule = DEFAULT_RULE
    metrics: str = "all"


@dataclass(frozen=True)
class CompareFlags:
    """`kvperf compare`'s flags as given."""

    refs: tuple[str, ...] = ()
    server_bins: tuple[str, ...] = ()
    config: Path | None = None
    runs: int | str | None = None  # a number, or AUTO
    tool: str | None = None
    label: str | None = None
    seed: int | None = None
    schedule: Schedule | None = None  # None: duet for binaries where the plan allows it
    measure: Measure = Measure.TIMING
    keys: int = 100_000
    profile: ProfileSettings | None = None
    metrics: str = "all"
    output: Path | None = None
    fail_on_regression: bool = False
    max_runs: int | None = None  # --runs auto's limit (None: the default)
    water_line: float = DEFAULT_WATER_LINE * 100  # percent
    min_effect: float = DEFAULT_MIN_EFFECT * 100  # percent
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    remote: RemoteFlags = field(default_factory=RemoteFlags)
    definitions: DefinitionFlags = field(default_factory=DefinitionFlags)
    interference: InterferenceFlags = field(default_factory=InterferenceFlags)
    clients: tuple[str, ...] = ()  # --client NAME[:MODEL] twice or more: the sides
    clients_dirs: tuple[Path, ...] = ()
    client_repos: tuple[str, ...] = ()  # --client-repo [NAME=]PATH (NAME@REF sides)
    concurrency: Concurrency | None = None
    rate_sweep: RateSweepFlags = field(default_factory=RateSweepFlags)


@dataclass(frozen=True)
class CompareRequest:
    """Two built refs (A, B) or N ≥ 2 server binaries (the first is the baseline) run
    interleaved and judged against the first; with ``definitions``, their tests instead."""

    sides: SidesRequest
    refs: tuple[str, ...]  # built as A and B, or none
    server_bins: tuple[str, ...]  # the runnable ones, or none
    build: BuildRequest | None
    rule: Rule
    min_effect: float  # a fraction (instruction mode)
    store: StoreRequest
    remote: RemoteRequest | None = None
    metrics: str = "all"
    output: Path | None = None
    fail_on_regression: bool = False
    skipped: tuple[tuple[str, str], ...] = ()  # --server-bin not found, and why
    definitions: tuple[Plan | Refusal, ...] | None = None  # compare --definitions
    clients: tuple[str, ...] = ()  # compare --client: one side per client, one server
    snapshots: Snapshots = NO_SNAPSHOTS  # compare --definitions: the dataset snapshot cache

    @property
    def count(self) -> int:
        return len(self.clients) or len(self.refs) or len(self.server_bins)


@dataclass(frozen=True)
class NoiseFlags:
    """`kvperf noise`'s flags as given."""

    server_bin: str | None = None
    commit: str | None = None
    config: Path | None = None
    runs: int | str | None = None  # a number, or AUTO
    tool: str | None = None
    label: str | None = None
    seed: int | None = None
    schedule: Schedule = Schedule.ALTERNATE
    max_runs: int | None = None  # --runs auto's limit (None: the default)
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    remote: RemoteFlags = field(default_factory=RemoteFlags)


@dataclass(frozen=True)
class NoiseRequest:
    """One server run against itself, interleaved: a binary, or a ref built once."""

    sides: SidesRequest
    store: StoreRequest
    server_bin: str | None = None
    commit: str | None = None
    build: BuildRequest | None = None
    remote: RemoteRequest | None = None


@dataclass(frozen=True)
class SidesRequest:
    """An interleaved run of several sides over one plan. ``kind`` names the default
    results directory (``<kind>-<timestamp>``); ``seed`` None draws one (recorded)."""

    kind: str
    runs: int
    config: Path | None = None
    tool: str | None = None
    results_dir: Path = Path("results")
    label: str | None = None
    seed: int | None = None
    measure: Measure = Measure.TIMING
    schedule: Schedule = Schedule.ALTERNATE
    profile: ProfileSettings | None = None
    keys: int = 100_000  # --measure memory
    interference: InterferencePolicy = field(default_factory=InterferencePolicy)
    clients: tuple[str, ...] = ()  # compare --client: one side per client
    clients_dirs: tuple[Path, ...] = ()
    concurrency: Concurrency | None = None
    rate_sweep: RateSweep | None = None  # compare --rate-sweep: every side sweeps
    specs: tuple[BenchmarkSpec, ...] | None = None  # the config, loaded once by the command
    client_repos: tuple[str, ...] = ()  # --client-repo [NAME=]PATH (NAME@REF sides)
    auto: AutoRuns | None = None  # --runs auto (``runs`` is then its max-runs)

    @property
    def out_dir(self) -> Path:
        return self.results_dir / (self.label or default_label(self.kind))


def default_label(kind: str) -> str:
    """A fresh directory per comparison, so reruns never mix their rows."""
    return f"{kind}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
