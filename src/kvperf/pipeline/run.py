"""One side of a run: config → plan → server → driver → results → store.

``prepare`` does everything that can fail on bad input (exit 2) before any server starts;
``execute`` runs the trials, persisting each row as soon as its trial ends.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from kvperf.config.loader import default_config_path, load_config
from kvperf.config.model import BenchmarkSpec
from kvperf.core.cpus import format_cpu_list
from kvperf.core.errors import DriverError, Interrupted, KvperfError, ServerError, UsageError
from kvperf.driver.base import Driver, Target
from kvperf.driver.registry import resolve_driver
from kvperf.pipeline import quick
from kvperf.pipeline.duet import DUET_DEFAULT_SECONDS
from kvperf.pipeline.instructions import check_measure, server_wrapping
from kvperf.pipeline.trial_run import TrialRun
from kvperf.plan.matrix import expand
from kvperf.plan.trial import Trial
from kvperf.results.row import RunContext, build_row
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info
from kvperf.server.tls import TlsFiles, make_tls_files
from kvperf.sourcebuild.builder import find_server
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")



@dataclass(frozen=True)
class RunOptions:
    """Validated options of ``kvperf run`` (built by the CLI)."""

    config: Path | None = None
    results_dir: Path = Path("results")
    label: str | None = None
    commit: str | None = None
    runs: int = 1
    mode: str = "both"
    target_ip: str = "127.0.0.1"
    port: int | None = None
    use_running_server: bool = False
    server_bin: str | None = None
    valkey_path: Path | None = None
    tool: str | None = None
    tool_path: Path | None = None
    blocked: str | None = None  # why no trial of this side can run (e.g. its build failed)
    provenance: tuple[tuple[str, str], ...] = ()  # extra env facts (build log, ref, …)
    measure: str = "timing"  # timing | instructions | perf-instructions (pipeline/instructions)
    schedule: str = "alternate"  # how sides share the machine (pipeline/ab.py, duet.py)
    # History revision by the binary's identity when no commit names it (compare sides,
    # whose labels "A"/"B" would pool different servers across comparisons).
    revision_from_binary: bool = False


@dataclass
class Prepared:
    """Everything decided before the first server starts."""

    options: RunOptions
    specs: list[BenchmarkSpec]
    trials: list[Trial]
    driver: Driver
    binary: ServerBinary | None
    context: RunContext
    out_dir: Path


@dataclass
class RunSummary:
    """What a finished (or interrupted) run produced."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    metrics_path: Path | None = None

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if r["status"] != "ok")


class Observer(Protocol):
    """Progress hooks; the CLI passes a reporter, tests may pass a recorder."""

    def trial_started(self, trial: Trial, position: int, total: int) -> None: ...

    def stage(self, trial: Trial, name: str) -> None: ...

    def trial_finished(self, trial: Trial, row: dict[str, Any]) -> None: ...


class SilentObserver:
    """An Observer that ignores every event."""

    def trial_started(self, trial: Trial, position: int, total: int) -> None:
        pass

    def stage(self, trial: Trial, name: str) -> None:
        pass

    def trial_finished(self, trial: Trial, row: dict[str, Any]) -> None:
        pass


def validate_label(label: str) -> str:
    """A label becomes a directory name: it is data, but it may not leave the results dir."""
    if not label or label in (".", "..") or "/" in label or "\0" in label:
        raise UsageError(f"--label {label!r}: a label may not be empty, '.', '..', or "
                         "contain '/' (it names a directory under --results-dir)")
    return label


def _client_mode(options: RunOptions) -> bool:
    return options.mode == "client" or options.use_running_server


DEFAULT_REQUESTS = 400_000  # the built-in config for tools without --duration


def load_specs(options: RunOptions) -> list[BenchmarkSpec]:
    """The user's config, or the built-in default (unpinned on a machine with one CPU;
    measure stages of DUET_DEFAULT_SECONDS under --schedule duet, which needs sides that
    stop together)."""
    cpus = available_cpus()
    if options.config:
        return load_config(options.config, cpus)
    specs = load_config(default_config_path(), cpus | {0, 1})
    if len(cpus) < 2 or not {0, 1} <= cpus:
        specs = [replace(s, server_cpus=None, client_cpus=None) for s in specs]
    if options.schedule == "duet":
        specs = [replace(s, requests=None, duration=(DUET_DEFAULT_SECONDS,)) for s in specs]
    return specs


def _server_binary(options: RunOptions) -> ServerBinary | None:
    if _client_mode(options) or options.blocked:
        return None
    explicit = options.server_bin
    if explicit is None and options.valkey_path:
        candidate = find_server(options.valkey_path)
        if candidate is None:
            raise UsageError(f"--valkey-path {options.valkey_path}: no src/valkey-server or "
                             "src/redis-server in it (build it first, or pass --server-bin)")
        explicit = str(candidate)
    return resolve(explicit)


def _check_trials(trials: list[Trial], driver: Driver, options: RunOptions) -> None:
    for trial in trials:
        reason = driver.unsupported(trial.load, trial.server.cluster_mode, trial.server.tls)
        if reason is None and _client_mode(options) and trial.server.tls:
            reason = "'tls_mode' against a server kvperf did not start is not supported yet"
        if reason:
            raise UsageError(f"config object {trial.spec_index}: {reason}")


def _running_server_version(endpoint: Endpoint) -> str | None:
    try:
        with RespClient(endpoint, timeout=3) as client:
            reply = client.call("INFO", "server")
    except (ConnectionLost, RespError) as exc:
        raise UsageError(f"--mode client: cannot reach the server at {endpoint}: {exc}") from None
    info = parse_info(reply if isinstance(reply, bytes) else b"")
    version = info.get("valkey_version") or info.get("redis_version")
    product = "valkey" if "valkey_version" in info else "redis"
    return f"{product}-{version}" if version else None


def client_endpoint(options: RunOptions) -> Endpoint:
    return Endpoint(options.target_ip, options.port or 6379)


def prepare(options: RunOptions) -> Prepared:
    """Load and check everything; raise UsageError/ConfigError (exit 2) before any server."""
    specs = load_specs(options)
    driver = resolve_driver(options.tool, options.tool_path, options.valkey_path)
    if options.config is None and not driver.capabilities.duration:
        # The built-in config measures 3 s per trial; a tool without --duration runs a
        # request count that takes about as long on these machines instead.
        specs = [replace(s, duration=None, requests=(DEFAULT_REQUESTS,)) if s.duration else s
                 for s in specs]
    specs = check_measure(options.measure, specs, driver, own_config=options.config is not None,
                          client_mode=_client_mode(options))
    specs = quick.shrink(specs)
    trials = expand(specs, quick.runs(options.runs))
    _check_trials(trials, driver, options)
    binary = _server_binary(options)
    if binary:
        server_version = binary.label
    elif options.mode == "server" or options.blocked:
        server_version = None
    else:
        server_version = _running_server_version(client_endpoint(options))
    label = validate_label(options.label or options.commit or server_version or "results")
    env = {**host_facts(), "tool": f"{driver.name} {driver.version}",
           "server_binary": str(binary.path) if binary else None,
           "server_source": (binary.source if binary else
                             "not built" if options.blocked else "running server"),
           **dict(options.provenance), **({"quick": True} if quick.enabled() else {})}
    revision = (binary.identity() if options.revision_from_binary and binary
                and not options.commit else None)
    context = RunContext(label, options.commit, driver.name, driver.version, server_version, env,
                         options.measure, revision)
    return Prepared(options, specs, trials, driver, binary, context,
                    options.results_dir / label)


class Runner:
    """Executes a prepared plan, trial after trial, persisting every row."""

    def __init__(self, prepared: Prepared, observer: Observer | None = None,
                 store: TrialWriter | None = None) -> None:
        self.prepared = prepared
        self.observer: Observer = observer or SilentObserver()
        self.metrics = MetricsFile(prepared.out_dir / "metrics.json")
        self.store = store
        self._tls: TlsFiles | None = None

    def tls_files(self) -> TlsFiles:
        if self._tls is None:
            self._tls = make_tls_files(self.prepared.out_dir / "tls")
        return self._tls

    def execute(self) -> RunSummary:
        summary = RunSummary(metrics_path=self.metrics.path)
        total = len(self.prepared.trials)
        for position, trial in enumerate(self.prepared.trials, 1):
            self.observer.trial_started(trial, position, total)
            row = self.run_trial(trial)
            self.persist(row)
            summary.rows.append(row)
            self.observer.trial_finished(trial, row)
        return summary

    def persist(self, row: dict[str, Any]) -> None:
        """Database first (its own transaction), then metrics.json: a kill between the two
        leaves every row of metrics.json in the database. A database failure is counted by
        the writer and never stops the run."""
        if self.store is not None:
            self.store.record(row, self.metrics.path)
        self.metrics.append(row)

    def trial_log_dir(self, trial: Trial) -> Path:
        return self.prepared.out_dir / "trials" / f"{trial.index:04d}-{trial.id}-r{trial.run}"

    def run_trial(self, trial: Trial, sync: Callable[[str], None] | None = None
                  ) -> dict[str, Any]:
        log_dir = self.trial_log_dir(trial)
        log_dir.mkdir(parents=True, exist_ok=True)
        work = TrialRun(self.prepared, trial, self.observer, log_dir, sync=sync)
        log.info("trial %d: %s", trial.index, trial.describe())
        if self.prepared.options.blocked:
            work.outcome.error = self.prepared.options.blocked
            return build_row(trial, self.prepared.context, work.outcome,
                             datetime.now(UTC).astimezone())
        try:
            self._run_on_target(work)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError) as exc:
            work.outcome.error = work.outcome.error or str(exc)
        if work.outcome.error:
            log.warning("trial %d failed: %s", trial.index, work.outcome.error)
        return build_row(trial, self.prepared.context, work.outcome,
                         datetime.now(UTC).astimezone())

    def _run_on_target(self, work: TrialRun) -> None:
        trial, options = work.trial, self.prepared.options
        if _client_mode(options):
            target = Target((client_endpoint(options),), trial.server.cluster_mode)
            work.outcome.pinning = {"server": None, "client": _client_pinning(trial)}
            work.run(target, [])
            return
        assert self.prepared.binary is not None
        tls = self.tls_files() if trial.server.tls else None
        group = ServerGroup(self.prepared.binary, trial.server, work.log_dir, tls,
                            **server_wrapping(options.measure, work.log_dir))
        with contextlib.ExitStack() as stack:
            with work.stage("server_start"):
                stack.enter_context(group)
            log.info("trial %d: server pids %s at %s", trial.index,
                     " ".join(map(str, group.pids)), " ".join(map(str, group.endpoints)))
            work.outcome.pinning = {"server": group.pinning(), "client": _client_pinning(trial)}
            applied = group.effective_config()
            if applied:
                work.outcome.checks["server_config"] = applied
            target = Target(tuple(group.endpoints), trial.server.cluster_mode,
                            tls.ca if tls else None)
            try:
                work.run(target, group.pids)
            except (DriverError, ServerError, ConnectionLost) as exc:
                work.outcome.error = _blame(group, exc)
            else:
                work.outcome.error = group.health()


def _blame(group: ServerGroup, exc: Exception) -> str:
    """Prefer the server's own failure (crash, kill) over the tool's view of it."""
    time.sleep(0.2)  # let a dying server finish writing its log / exit status
    health = group.health()
    return f"{health} (tool: {exc})" if health else str(exc)


def _client_pinning(trial: Trial) -> str | None:
    return format_cpu_list(trial.load.cpus) if trial.load.cpus else None


def serve(prepared: Prepared, announce: Callable[[list[Endpoint]], None],
          wait: Callable[[], None]) -> None:
    """--mode server: start the first trial's server setup, announce it, wait, tear down."""
    assert prepared.binary is not None
    setup = prepared.trials[0].server
    tls = make_tls_files(prepared.out_dir / "tls") if setup.tls else None
    with ServerGroup(prepared.binary, setup, prepared.out_dir / "server", tls) as group:
        announce(group.endpoints)
        wait()
