"""The types of ``--module-repo R`` on ``compare``, ``run --commits`` and ``bisect``:
the flags as given, where modules come from (``ModuleSource``: repository, recipe,
artifact, the server's tree), and the sides' request (refs, the scenarios' plan on one
server, how compare judges them); pipeline/commands/module_sides.py checks them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.verdict import DEFAULT_WATER_LINE, Rule
from kvperf.core.kinds import Measure
from kvperf.pipeline.request.common import (
    BuildFlags,
    BuildRequest,
    InterferenceFlags,
    StoreFlags,
    StoreRequest,
)
from kvperf.pipeline.request.options import InterferencePolicy, ModuleOptions
from kvperf.sourcebuild.module_builder import ModuleBuilder


@dataclass(frozen=True)
class ModuleSidesFlags:
    """The flags as given (``kind``: compare needs two refs, commits one or more)."""

    kind: str
    refs: tuple[str, ...]
    repo: str
    module_config: Path | None
    build: str | None = None
    artifact: str | None = None
    module: str | None = None
    module_paths: tuple[Path, ...] = ()
    groups: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    server_bin: str | None = None
    server_ref: str | None = None  # the server built from --repo at this ref
    valkey_path: Path | None = None
    runs: int | None = None
    seed: int | None = None
    label: str | None = None
    builds: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    interference: InterferenceFlags = field(default_factory=InterferenceFlags)
    quick: bool = False
    measure: Measure = Measure.TIMING  # MEMORY: also bytes per unit (run/module_memory.py)
    # compare: how the sides are judged (--metrics, --water-line, --min-effect, --output,
    # --fail-on-regression)
    metrics: str = "all"
    water_line: float = DEFAULT_WATER_LINE * 100  # percent
    min_effect: float = DEFAULT_MIN_EFFECT * 100  # percent
    output: Path | None = None
    fail_on_regression: bool = False


@dataclass(frozen=True)
class ModuleSource:
    """``--module-repo R [--module-build CMD] [--module-artifact GLOB]``."""

    repo: str
    build: str | None
    artifact: str | None
    cache: Path
    jobs: int | None = None
    server_src: Path | None = None  # {server_src}: the server's source tree, when known

    def builder(self) -> ModuleBuilder:
        return ModuleBuilder(self.cache, self.repo, self.build, self.artifact,
                             self.server_src, self.jobs)


@dataclass(frozen=True)
class ModuleSidesRequest:
    """Module refs built and run as sides over one module-scenario plan."""

    refs: tuple[str, ...]
    source: ModuleSource
    options: ModuleOptions  # the plan, the server binary; module_paths loaded on every side
    runs: int
    out_dir: Path
    seed: int | None = None
    store: StoreRequest = field(default_factory=lambda: StoreRequest(None))
    interference: InterferencePolicy = field(default_factory=InterferencePolicy)
    server_build: BuildRequest | None = None  # --repo: the fixed server built at server_ref
    server_ref: str | None = None
    server_commit: str | None = None  # set once the server is built
    rule: Rule = field(default_factory=Rule)  # compare: the verdict rule (--water-line)
    min_effect: float = DEFAULT_MIN_EFFECT  # compare --measure instructions, a fraction
    metrics: str = "all"
    output: Path | None = None  # compare --output: the markdown report
    fail_on_regression: bool = False
