"""The validated options a request carries into a workflow: one run of the config matrix
(``RunOptions``), what disturbed trials get (``InterferencePolicy``), a run of definitions
(``DefinitionOptions``) or of module scenarios (``ModuleOptions``). Plain data: the checks
that build them live in pipeline/commands/."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.config.model import BenchmarkSpec
from kvperf.config.model import ProfileSettings as ProfileSettings  # the type of its flags
from kvperf.config.rate_sweep import RateSweep
from kvperf.config.scenarios import ModuleConfig, Selected
from kvperf.core.kinds import Concurrency, Measure, Mode, Schedule
from kvperf.core.secret import Secret
from kvperf.driver.trace_replay import Replay
from kvperf.results.interference import DISTURBED_SHARE


@dataclass(frozen=True)
class RunOptions:
    """Validated options of ``kvperf run`` (built by the CLI)."""

    config: Path | None = None
    results_dir: Path = Path("results")
    label: str | None = None
    commit: str | None = None
    runs: int = 1
    mode: Mode = Mode.BOTH  # CLIENT also for --use-running-server
    target_ip: str = "127.0.0.1"
    port: int | None = None
    server_bin: str | None = None
    valkey_path: Path | None = None
    tool: str | None = None
    tool_path: Path | None = None
    blocked: str | None = None  # why no trial of this side can run (e.g. its build failed)
    provenance: tuple[tuple[str, str], ...] = ()  # extra env facts (build log, ref, …)
    measure: Measure = Measure.TIMING
    schedule: Schedule = Schedule.ALTERNATE
    # History revision by the binary's identity when no commit names it (compare sides,
    # whose labels "A"/"B" would pool different servers across comparisons).
    revision_from_binary: bool = False
    profile: ProfileSettings | None = None  # --profile: perf record in the measure stage
    suites: tuple[str, ...] = ()  # --suite: built-in configs (config/suites.py), not --config
    quick: bool = False  # --quick: quick mode for this run (pipeline/run/quick.py)
    gates: tuple[str, ...] = ()  # --gate texts (analysis/gates.py)
    gate_baseline: Path | None = None  # --baseline PATH of relative gates
    keys: int = 100_000  # --measure memory: keys (or elements) seeded per trial
    module_paths: tuple[Path, ...] = ()  # --module-path: loaded into every node (+ config's)
    bind: str = "127.0.0.1"  # --mode server --bind
    # requirepass of --mode server / AUTH of --mode client ($KVPERF_SERVER_PASSWORD); shows
    # as *** in reprs
    password: Secret | None = None
    tls_ca: Path | None = None  # --mode client --tls: verify the server with this CA
    clients: tuple[str, ...] = ()  # --client NAME…: client harnesses run the matrix
    clients_dirs: tuple[Path, ...] = ()  # --clients-dir: the user's own harnesses
    client_repos: tuple[str, ...] = ()  # --client-repo [NAME=]PATH: for NAME@REF clients
    concurrency: Concurrency | None = None  # --concurrency: the harnesses' model
    # compare --client: this side is one client; its rows pair with the other sides' by
    # the trial alone (the client is the side, not part of the series)
    client_side: bool = False
    rate_sweep: RateSweep | None = None  # --rate-sweep: every series swept (rate_sweep.py)
    # the config as the command loaded it, once (pipeline/run/prepare.config_specs); None:
    # prepare loads it
    specs: tuple[BenchmarkSpec, ...] | None = None


@dataclass(frozen=True)
class InterferencePolicy:
    """What a run does about trials other processes disturbed (results/interference.py):
    ``retry`` runs a disturbed work once more (a duet round: on every side), ``exclude``
    leaves a disturbed row that remains out of timing statistics, else it is kept and
    marked; ``threshold``: the share of a watched core (or of the hypervisor's steal) that
    makes a trial disturbed; None judges none (instruction counts and memory do not depend
    on other processes: their rows record the sampling, never a verdict)."""

    retry: bool = False
    exclude: bool = False
    threshold: float | None = DISTURBED_SHARE


@dataclass(frozen=True)
class Snapshots:
    """The dataset snapshot cache definitions' tests use (``directory`` None: every preload
    for real) and its size cap (least recently used evicted)."""

    directory: Path | None = None
    max_bytes: int = 20 * 1024**3


NO_SNAPSHOTS = Snapshots()  # every preload for real


@dataclass(frozen=True)
class DefinitionOptions:
    """Validated options of ``kvperf run --definitions`` (built by the CLI)."""

    results_dir: Path = Path("results")
    label: str | None = None
    server_bin: str | None = None
    kvload: Path | None = None  # kvload for memtier's front end (default: on PATH)
    profile: ProfileSettings | None = None  # --profile: perf record in the measure stage
    commit: str | None = None  # the commit the server was built from (`track run`'s jobs)
    snapshots: Snapshots = NO_SNAPSHOTS  # the dataset snapshot cache and its size cap
    reuse_servers: bool = False  # keep a server a test left unchanged for the next test


@dataclass(frozen=True)
class ModuleOptions:
    """Validated options of ``kvperf run --module-config`` (built by the CLI)."""

    config: ModuleConfig
    selected: Selected
    results_dir: Path = Path("results")
    label: str | None = None
    server_bin: str | None = None
    module: str | None = None  # --module NAME: recorded with every row
    module_paths: tuple[Path, ...] = ()  # --module-path SO: loaded into every node
    dataset_dir: Path | None = None  # generated datasets (default <results-dir>/datasets)
    quick: bool = False  # --quick (pipeline/run/quick.py), as KVPERF_QUICK=1
    measure: Measure = Measure.TIMING  # MEMORY: also bytes per unit (run/module_memory.py)


@dataclass(frozen=True)
class TraceOptions:
    """Validated options of ``kvperf run --trace`` (built by the CLI)."""

    trace: Path
    replay: Replay = field(default_factory=Replay)
    results_dir: Path = Path("results")
    label: str | None = None
    server_bin: str | None = None
    runs: int = 1
