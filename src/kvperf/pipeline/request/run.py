"""The types of `kvperf run`: its flags as given (``RunFlags``) and the four requests
it can become — the config matrix on one server (``RunRequest``), commits built and
interleaved (``CommitsRequest``), benchmark definitions (``DefinitionsRequest``), module
scenarios (``ModulesRequest``); pipeline/commands/run.py checks the flags into one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.config.model import ProfileSettings
from kvperf.core.kinds import Concurrency, Measure, Mode, Schedule
from kvperf.definitions.plan import Plan, Refusal
from kvperf.pipeline.request.common import (
    MEMORY_KEYS,
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
from kvperf.pipeline.request.options import (
    DefinitionOptions,
    InterferencePolicy,
    ModuleOptions,
    RunOptions,
)
from kvperf.pipeline.request.sides import SidesRequest


@dataclass(frozen=True)
class RunFlags:
    """`kvperf run`'s flags as given."""

    config: Path | None = None
    suite: str | None = None
    quick: bool = False
    gates: tuple[str, ...] = ()
    label: str | None = None
    runs: int = 1
    mode: Mode = Mode.BOTH
    target_ip: str = "127.0.0.1"
    port: int | None = None
    use_running_server: bool = False
    server_bin: str | None = None
    valkey_path: Path | None = None
    commits: tuple[str, ...] = ()
    baseline: str | None = None
    schedule: Schedule = Schedule.ALTERNATE
    tool: str | None = None
    tool_path: Path | None = None
    commit: str | None = None
    log_level: str = "WARNING"
    dry_run: bool = False
    measure: Measure = Measure.TIMING
    keys: int = MEMORY_KEYS
    profile: ProfileSettings | None = None
    bind: str | None = None
    generate_password: bool = False
    tls: bool = False
    tls_ca: Path | None = None
    module_config: Path | None = None
    module: str | None = None
    module_paths: tuple[Path, ...] = ()
    groups: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    remote: RemoteFlags = field(default_factory=RemoteFlags)
    definitions: DefinitionFlags = field(default_factory=DefinitionFlags)
    interference: InterferenceFlags = field(default_factory=InterferenceFlags)
    clients: tuple[str, ...] = ()  # --client NAME…
    clients_dirs: tuple[Path, ...] = ()
    client_repos: tuple[str, ...] = ()  # --client-repo [NAME=]PATH
    concurrency: Concurrency | None = None
    rate_sweep: RateSweepFlags = field(default_factory=RateSweepFlags)


@dataclass(frozen=True)
class RunRequest:
    """The config matrix on one server (``--mode both``), or ``--mode server/client``."""

    options: RunOptions
    store: StoreRequest
    dry_run: bool = False
    log_level: str = "WARNING"
    tree: BuildRequest | None = None  # --valkey-path without a server binary: built first
    remote: RemoteRequest | None = None
    show_password: bool = False  # --generate-password: printed once, before serving
    interference: InterferencePolicy = field(default_factory=InterferencePolicy)


@dataclass(frozen=True)
class CommitsRequest:
    """``--commits A B … [--baseline C]``: every ref built, then run interleaved."""

    sides: SidesRequest
    refs: tuple[str, ...]  # the baseline first when there is one
    baseline: bool
    build: BuildRequest
    store: StoreRequest
    remote: RemoteRequest | None = None
    dry_run: bool = False  # build only


@dataclass(frozen=True)
class DefinitionsRequest:
    """``--definitions PATH…``: the selected definitions, planned (or refused)."""

    planned: tuple[Plan | Refusal, ...]
    options: DefinitionOptions
    store: StoreRequest
    dry_run: bool = False
    interference: InterferencePolicy = field(default_factory=InterferencePolicy)


@dataclass(frozen=True)
class ModulesRequest:
    """A module-test config (``test_groups``): its groups and scenarios, selected."""

    options: ModuleOptions
    store: StoreRequest
    dry_run: bool = False
    interference: InterferencePolicy = field(default_factory=InterferencePolicy)


AnyRunRequest = RunRequest | CommitsRequest | DefinitionsRequest | ModulesRequest


