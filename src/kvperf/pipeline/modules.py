"""Module scenarios (the seed's ``test_groups`` format): one fresh server per config set ×
group with the modules loaded, its scenarios in order on it.

Per scenario: ``flush_before`` → FLUSHALL; ``setup_commands`` sent once (an error reply
fails the scenario, naming the command); counters reset; kvload runs the scenario's
command — an ingestion with a dataset sends each row once in file order (``-n`` rows, up to
``maxdocs``), a timed scenario runs ``duration`` seconds after ``warmup`` with ``clients``
connections, ``__field:NAME__`` filled from dataset rows (in order with ``sequential``,
else random from the config's seed). The row (results/row.scenario_row) is persisted
before the next scenario; a failed scenario is recorded and the run goes on; Ctrl-C keeps
the finished rows and stops only the servers kvperf started.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from kvperf.config.model import ModuleSpec, ProfileSettings
from kvperf.config.scenarios import ModuleConfig, Scenario, ScenarioType, TestGroup
from kvperf.core.errors import ConfigError, DriverError, Interrupted, KvperfError, UsageError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.driver.base import Target
from kvperf.driver.kvload import Kvload
from kvperf.driver.registry import find_tool
from kvperf.driver.scenario_load import ScenarioLoad, run_scenario
from kvperf.pipeline import quick
from kvperf.pipeline.definitions import file_slug, pinning
from kvperf.pipeline.model import Launcher, ServerHandle
from kvperf.pipeline.prepare import check_module_paths, validate_label
from kvperf.pipeline.profiling import check_settings, profile_result, profiling
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import Row, RunContext, ScenarioTest, TrialOutcome, is_ok, scenario_row
from kvperf.server import stats as server_stats
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.instance import ServerGroup
from kvperf.server.process import read_cpu_times
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError
from kvperf.server.tls import make_tls_files
from kvperf.store.datasets import csv_header, csv_rows, materialize
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")
Selected = tuple[tuple[TestGroup, tuple[Scenario, ...]], ...]


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
    quick: bool = False  # --quick (pipeline/quick.py), as KVPERF_QUICK=1


@dataclass
class Dataset:
    path: Path
    rows: int
    columns: list[str]
    generated: bool = False


@dataclass
class ModuleRun:
    """Everything decided before the first server starts."""

    options: ModuleOptions
    kvload: Path
    binary: ServerBinary
    context: RunContext
    out_dir: Path
    datasets: dict[str, Dataset]
    modules: tuple[ModuleSpec, ...]
    server_cpus: tuple[int, ...] | None
    client_cpus: tuple[int, ...] | None
    notes: tuple[str, ...] = ()


@dataclass
class ModulesSummary:
    rows: list[Row] = field(default_factory=list)
    metrics_path: Path | None = None

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if not is_ok(r))


class ScenarioObserver(Protocol):
    def started(self, group: str, scenario: Scenario, position: int, total: int) -> None: ...

    def finished(self, row: Row) -> None: ...


class QuietObserver:
    def started(self, group: str, scenario: Scenario, position: int, total: int) -> None:
        pass

    def finished(self, row: Row) -> None:
        pass


def _datasets(options: ModuleOptions) -> dict[str, Dataset]:
    """Every dataset the selected scenarios use: generated (cached) or the named CSV file;
    each scenario's ``__field:NAME__`` checked against its columns (ConfigError)."""
    config = options.config
    directory = options.dataset_dir or options.results_dir / "datasets"
    specs = {g.name: g for g in config.generation}
    out: dict[str, Dataset] = {}
    for group, scenarios in options.selected:
        for s in scenarios:
            if s.dataset is None:
                continue
            if s.dataset not in out:
                if s.dataset in specs:
                    path, made = materialize(directory, specs[s.dataset], config.seed)
                else:
                    path, made = config.base_dir / s.dataset, False
                out[s.dataset] = Dataset(path, csv_rows(path), csv_header(path), made)
            _check_fields(group, s, out[s.dataset])
    return out


def _check_fields(group: TestGroup, s: Scenario, data: Dataset) -> None:
    missing = [f for f in s.fields if f not in data.columns]
    if missing:
        raise ConfigError(f"{group.group}/{s.id}: __field:{missing[0]}__ is not a column of "
                          f"{s.dataset} (columns: {', '.join(data.columns)})")
    if data.rows == 0:
        raise ConfigError(f"{group.group}/{s.id}: dataset {s.dataset} has no rows")


def _modules(options: ModuleOptions) -> tuple[ModuleSpec, ...]:
    args = options.config.module_args
    return tuple(ModuleSpec(m.path, args) for m in check_module_paths(options.module_paths))


def prepare_modules(options: ModuleOptions) -> ModuleRun:
    """Server, kvload, datasets, pinning: every check before any server starts."""
    config = options.config
    options = replace(options, selected=tuple(
        (group, tuple(quick.shrink_scenario(s, options.quick) for s in scenarios))
        for group, scenarios in options.selected))
    if config.cluster_mode:
        raise ConfigError(f"{config.source}: cluster_mode true is not run by kvperf's module "
                          "runner yet (scenarios run on one standalone node); set it false")
    modules = _modules(options)
    for index in range(config.passes):  # perf installed and allowed (exit 2)
        for _, scenarios in options.selected:
            for scenario in scenarios:
                check_settings(config.profile(index, scenario), client_mode=False)
    kvload = find_tool("kvload", None, None)
    if kvload is None:
        raise UsageError("module scenarios need kvload (install kvperf with its kvload binary)")
    driver = Kvload.probe(kvload)
    binary = resolve(options.server_bin)
    label = validate_label(options.label or binary.label)
    cpus = available_cpus()
    server, client, note = pinning(1, cpus)
    for key, chosen in (("server_cpu_range", config.server_cpus),
                        ("client_cpu_range", config.client_cpus)):
        outside = sorted(set(chosen or ()) - cpus)
        if outside:
            raise ConfigError(f"{config.source}: {key} names CPU {outside[0]}, but kvperf may "
                              f"use CPUs {','.join(map(str, sorted(cpus)))}")
    server, client = config.server_cpus or server, config.client_cpus or client
    env = {**host_facts(), "tool": f"kvload {driver.version}", **_quick_env(options.quick),
           "server_binary": str(binary.path), "server_source": binary.source}
    context = RunContext(label, None, "kvload", driver.version, binary.label, env,
                         Measure.TIMING)
    datasets = _datasets(options)
    notes = tuple(dict.fromkeys(n for g in config.generation for n in g.notes))
    return ModuleRun(options, kvload, binary, context, options.results_dir / label, datasets,
                     modules, server, client, notes + ((note,) if note else ()))


def _quick_env(forced: bool) -> dict[str, bool]:
    return {"quick": True} if quick.enabled(forced) else {}


class ModuleRunner:
    """Runs the selected scenarios of every config set, persisting every row."""

    def __init__(self, run: ModuleRun, observer: ScenarioObserver | None = None,
                 store: TrialWriter | None = None, launcher: Launcher = ServerGroup) -> None:
        self.run = run
        self.launcher = launcher
        self.observer: ScenarioObserver = observer or QuietObserver()
        self.store = store
        self.metrics = MetricsFile(run.out_dir / "metrics.json")
        self.position = 0

    @property
    def total(self) -> int:
        config = self.run.options.config
        per_set = sum(len(s) for _, s in self.run.options.selected)
        return per_set * len(config.config_sets) * config.passes

    def execute(self) -> ModulesSummary:
        """profiling_sets × config_sets × the selected groups (the seed's order)."""
        summary = ModulesSummary(metrics_path=self.metrics.path)
        config = self.run.options.config
        for profiled_pass in range(config.passes):
            for index, config_set in enumerate(config.config_sets):
                for group, scenarios in self.run.options.selected:
                    self._group(Pass(profiled_pass, index, config_set), group, scenarios, summary)
        return summary

    def _group(self, where: Pass, group: TestGroup, scenarios: tuple[Scenario, ...],
               summary: ModulesSummary) -> None:
        config = self.run.options.config
        config_set = where.config_set
        name = f"set{where.config_index}-group{group.group}"
        if config.passes > 1:
            name = f"profiling{where.profiling}-{name}"
        log_dir = self.run.out_dir / "scenarios" / name
        tls = make_tls_files(self.run.out_dir / "tls") if config.tls_mode else None
        setup = ServerSetup(False, config.tls_mode, None, 1, self.run.server_cpus, (),
                            config_set, self.run.modules)
        failure: str | None = None
        group_server: ServerHandle | None = None
        with contextlib.ExitStack() as stack:
            try:
                group_server = stack.enter_context(
                    self.launcher(self.run.binary, setup, log_dir, tls))
            except (KvperfError, OSError) as exc:
                failure = f"server did not start: {exc}"
            for scenario in scenarios:
                self.position += 1
                self.observer.started(group.group, scenario, self.position, self.total)
                work = ScenarioRun(self.run, group, scenario, dict(config_set), log_dir,
                                   config.profile(where.profiling, scenario))
                if group_server is not None:
                    work.execute(group_server)
                else:
                    work.outcome.error = failure
                self._record(work.row(), summary)

    def _record(self, row: Row, summary: ModulesSummary) -> None:
        if self.store is not None:
            self.store.record(row, self.metrics.path)
        self.metrics.append(row)
        summary.rows.append(row)
        self.observer.finished(row)


@dataclass(frozen=True)
class Pass:
    """Where the runner is: the profiling set and the config set (indexes, and its values)."""

    profiling: int
    config_index: int
    config_set: tuple[tuple[str, str], ...]


@dataclass
class ScenarioRun:
    """One scenario's stages on its group's server; collects the outcome."""

    run: ModuleRun
    group: TestGroup
    scenario: Scenario
    config_set: dict[str, str]
    log_dir: Path
    profile: ProfileSettings | None = None  # its profiling set's (with its own overrides)
    outcome: TrialOutcome = field(default_factory=TrialOutcome)
    requests: int | None = None

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.outcome.stage_seconds[name] = time.monotonic() - started

    def execute(self, server: ServerHandle) -> None:
        endpoints = tuple(server.endpoints)
        self.outcome.pinning = {"server": server.pinning(),
                                "client": ",".join(map(str, self.run.client_cpus or ())) or None}
        applied = server.effective_config()
        if applied:
            self.outcome.checks["server_config"] = applied
        try:
            self._stages(endpoints, server.pids)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError, OSError) as exc:
            health = server.health()
            self.outcome.error = f"{health} ({exc})" if health else str(exc)
        else:
            self.outcome.error = server.health()
        if self.outcome.error:
            log.warning("scenario %s/%s failed: %s", self.group.group, self.scenario.id,
                        self.outcome.error)

    def _stages(self, endpoints: tuple[Endpoint, ...], pids: list[int]) -> None:
        s = self.scenario
        if s.flush_before:
            with self.stage("flush"):
                _send(endpoints, ("FLUSHALL",))
        if s.setup_commands:
            with self.stage("setup"):
                for line in s.setup_commands:
                    _send(endpoints, tuple(shlex.split(line)))
        load = self._load()
        server_stats.reset_stats(endpoints)
        before = _cpu(pids)
        profile_dir = self.log_dir / f"profile-{file_slug(s.id)}"  # one per scenario
        if self.profile is not None:
            profile_dir.mkdir(parents=True, exist_ok=True)
        with (profiling(self.profile, pids, profile_dir) as profiled,
              self.stage("measure")):
            target = Target(endpoints, False, endpoints[0].tls_ca)
            self.outcome.measurement = run_scenario(self.run.kvload, load, target,
                                                    self.log_dir / f"{s.id}.log")
        self.outcome.profile = profile_result(profiled, f"{self.group.group}/{s.id}",
                                              self.run.out_dir)
        self._server_side(endpoints, pids, before)

    def _load(self) -> ScenarioLoad:
        s = self.scenario
        data = self.run.datasets.get(s.dataset) if s.dataset else None
        requests = s.requests
        if s.duration is None and requests is None and data is not None:
            requests = min(s.maxdocs or data.rows, data.rows)
        self.requests = requests
        return ScenarioLoad(s.kvload_command(), s.clients, s.pipeline, requests, s.duration,
                            s.warmup, s.sequential, data.path if data else None,
                            s.keyspacelen, self.run.options.config.seed, self.run.client_cpus)

    def _server_side(self, endpoints: tuple[Endpoint, ...], pids: list[int],
                     before: float | None) -> None:
        stats = server_stats.collect(endpoints).get("commandstats", {})
        word = self.scenario.first_word.lower()
        calls = sum(v["calls"] for n, v in stats.items() if n == word or
                    n.startswith(word + "|"))
        self.outcome.server = {"calls": calls, "commands": {
            n: {"calls": v["calls"], "usec_per_call": v["usec_per_call"]}
            for n, v in stats.items()}}
        after = _cpu(pids)
        if before is not None and after is not None:
            self.outcome.server["cpu_seconds"] = round(after - before, 3)
        with RespClient(endpoints[0]) as client:
            self.outcome.checks["dbsize"] = client.call("DBSIZE")
        measured = self.outcome.measurement
        per_request = len([p for p in self.scenario.command.split(" ; ") if p.strip()])
        if (measured is not None and measured.requests is not None
                and calls * per_request < measured.requests):
            raise DriverError(f"the server counted {calls} {word.upper()} calls for "
                              f"{measured.requests} requests kvload completed")

    def row(self) -> Row:
        s, options = self.scenario, self.run.options
        data = self.run.datasets.get(s.dataset) if s.dataset else None
        identity: dict[str, Any] = {
            "group": self.group.group, "scenario": s.id, "command": s.command,
            "config_set": self.config_set, "config": str(options.config.source)}
        if self.profile is not None:  # a profiled pass is a trial of its own
            identity["profile"] = {k: str(v) for k, v in asdict(self.profile).items()}
        test = ScenarioTest(s.id, self.group.group, stable_id(identity), s.clients,
                            s.pipeline, self.requests, s.duration, s.warmup, s.keyspacelen,
                            options.config.tls_mode, self.config_set)
        details: dict[str, Any] = {
            "group": self.group.group, "id": s.id, "type": str(s.type),
            "command": s.command, "setup_commands": list(s.setup_commands),
            "flush_before": s.flush_before, "sequential": s.sequential,
            "cluster_execution": str(s.cluster_execution), "maxdocs": s.maxdocs,
            "dataset": s.dataset, "dataset_file": str(data.path) if data else None,
            "dataset_rows": data.rows if data else None, "module": options.module,
            "module_paths": [m.path for m in self.run.modules],
            "config": str(options.config.source), "notes": list(self.run.notes),
            "ingestion": s.type == ScenarioType.INGESTION}
        return scenario_row(test, self.run.context, self.outcome, details,
                            datetime.now(UTC).astimezone())


def _send(endpoints: tuple[Endpoint, ...], command: tuple[str, ...]) -> None:
    """A command on every node; an error reply fails the scenario, naming the command."""
    for endpoint in endpoints:
        with RespClient(endpoint, timeout=60) as client:
            try:
                client.call(*command)
            except RespError as exc:
                raise DriverError(f"{' '.join(command)[:120]}: the server answered "
                                  f"{exc}") from None


def _cpu(pids: list[int]) -> float | None:
    times = [read_cpu_times(pid) for pid in pids]
    return None if not times or any(t is None for t in times) else sum(
        t.total for t in times if t)
