"""The types of `kvperf bisect GOOD BAD` (and of `kvperf regressions --bisect`'s
bisections): the flags as given and the question a bisection answers — series, metric,
measure, runs and budget, --min-effect, definitions, how commits are built, where the
batches' rows go (pipeline/commands/bisect.py checks them; pipeline/bisect.py settles)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan
from kvperf.pipeline.request.common import (
    BuildFlags,
    BuildRequest,
    DefinitionFlags,
    StoreFlags,
    StoreRequest,
)
from kvperf.pipeline.request.options import NO_SNAPSHOTS, Snapshots


@dataclass(frozen=True)
class BisectFlags:
    """`kvperf bisect`'s flags as given."""

    good: str
    bad: str
    series: str | None = None
    metric: str | None = None
    measure: Measure | None = None
    runs: int | None = None
    max_runs: int | None = None
    min_effect: float | None = None  # percent (None: the measure's default)
    resume: bool = False
    tool: str | None = None
    config: Path | None = None
    label: str | None = None
    seed: int | None = None
    output: Path | None = None
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    definitions: DefinitionFlags = field(default_factory=DefinitionFlags)
    client: str | None = None  # --client NAME: the library's commits, not the server's
    client_repos: tuple[str, ...] = ()  # --client-repo [NAME=]PATH: its repository
    clients_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True)
class BisectRequest:
    """What `kvperf bisect` was asked (None: the default, see ``settle``)."""

    good: str
    bad: str
    repo: str
    series: str | None = None
    metric: str | None = None
    measure: Measure | None = None
    runs: int | None = None
    max_runs: int | None = None
    config: Path | None = None
    tool: str | None = None
    results_dir: Path = Path("results")
    label: str | None = None
    seed: int | None = None
    resume: bool = False
    min_effect: float | None = None  # a fraction (None: analysis.bisect.effects' default)
    definitions: tuple[Plan, ...] = ()  # planned tests (--definitions) instead of a config
    definition_paths: tuple[str, ...] = ()  # where they came from (the log's question)
    refused: tuple[tuple[str, str, str], ...] = ()  # (test, topology, why) not planned
    build: BuildRequest | None = None  # how LiveBench builds commits (``repo``'s)
    store: StoreRequest = field(default_factory=lambda: StoreRequest(None))  # rows go here
    output: Path | None = None  # --output: the markdown report
    client: str | None = None  # bisect --client: a library's commits (``repo`` is its)
    clients_dirs: tuple[Path, ...] = ()
    snapshots: Snapshots = NO_SNAPSHOTS  # --definitions: the dataset snapshot cache
