"""Module scenarios (the seed's ``test_groups`` format): one fresh server per config set ×
group with the modules loaded, its scenarios in order on it.

Per scenario: ``flush_before`` → FLUSHALL; ``setup_commands`` sent once (an error reply
fails the scenario, naming the command); counters reset; kvload runs the scenario's
command — an ingestion with a dataset sends each row once in file order (``-n`` rows, up to
``maxdocs``), a timed scenario runs ``duration`` seconds after ``warmup`` with ``clients``
connections, ``__field:NAME__`` filled from dataset rows (in order with ``sequential``,
else random from the config's seed). Each scenario is a unit of work (``ScenarioWork``) of
the one runner (pipeline/runner.Runner), the scenarios of a group sharing its server; the
row is persisted before the next scenario; a failed scenario is recorded and the run goes
on; Ctrl-C keeps the finished rows and stops only the servers kvperf started.

``--measure memory`` also reads INFO memory before the scenario's data goes in and after its
load: bytes per its unit (pipeline/run/module_memory.py). ``--measure instructions`` runs
each group's server under callgrind, timed scenarios as a fixed request count, and counts
each scenario's measure stage (pipeline/run/instructions.py).
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Hashable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from kvperf.config.model import ModuleSpec, ProfileSettings
from kvperf.config.scenarios import ModuleConfig, Scenario, ScenarioType, Selected, TestGroup
from kvperf.core.errors import ConfigError, DriverError, UsageError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Measure
from kvperf.driver.base import Target
from kvperf.driver.kvload import Kvload
from kvperf.driver.registry import find_tool
from kvperf.driver.scenario_load import ScenarioLoad, run_scenario
from kvperf.pipeline.request.options import ModuleOptions
from kvperf.pipeline.run import module_memory, quick
from kvperf.pipeline.run.definition_work import file_slug, pinning
from kvperf.pipeline.run.instructions import (
    Counted,
    counted_result,
    counted_scenario,
    counting,
    server_wrapping,
)
from kvperf.pipeline.run.model import Bench, OnBench
from kvperf.pipeline.run.prepare import check_module_paths, validate_label
from kvperf.pipeline.run.profiling import check_settings, profile_result, profiling
from kvperf.plan.trial import ServerSetup
from kvperf.results.memory import memory_record
from kvperf.results.records import ScenarioRecord
from kvperf.results.row import (
    Details,
    Row,
    RunContext,
    ScenarioTest,
    Series,
    TrialOutcome,
    build_row,
)
from kvperf.server import callgrind
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.memory import MemoryInfo
from kvperf.server.resp import Endpoint, RespClient, RespError
from kvperf.store.datasets import csv_header, csv_rows, materialize

log = logging.getLogger("kvperf")


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

    @property
    def blocked(self) -> str | None:
        return None

    def works(self) -> list[ScenarioWork]:
        """profiling_sets × config_sets × the selected groups × their scenarios (the seed's
        order); a group's scenarios share its server."""
        config = self.options.config
        out: list[ScenarioWork] = []
        for profiled in range(config.passes):
            for index, config_set in enumerate(config.config_sets):
                for group, scenarios in self.options.selected:
                    name = f"set{index}-group{group.group}"
                    if config.passes > 1:
                        name = f"profiling{profiled}-{name}"
                    out += [ScenarioWork(self, group, scenario, config_set,
                                         self.out_dir / "scenarios" / name,
                                         config.profile(profiled, scenario))
                            for scenario in scenarios]
        return out


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
    counted = options.measure == Measure.INSTRUCTIONS
    options = replace(options, selected=tuple(
        (group, tuple(_measured(quick.shrink_scenario(s, options.quick), counted)
                      for s in scenarios))
        for group, scenarios in options.selected))
    if config.cluster_mode:
        raise ConfigError(f"{config.source}: cluster_mode true is not run by kvperf's module "
                          "runner yet (scenarios run on one standalone node); set it false")
    modules = _modules(options)
    check_module_measure(config, options.selected, options.measure)
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
                         options.measure)
    datasets = _datasets(options)
    notes = tuple(dict.fromkeys(n for g in config.generation for n in g.notes))
    return ModuleRun(options, kvload, binary, context, options.results_dir / label, datasets,
                     modules, server, client, notes + ((note,) if note else ()))


def check_module_measure(config: ModuleConfig, selected: Selected, measure: Measure) -> None:
    """perf installed and allowed for the profiled passes; under --measure instructions
    callgrind installed and no pass profiled (UsageError, exit 2: before any build)."""
    counted = measure == Measure.INSTRUCTIONS
    for index in range(config.passes):
        for _, scenarios in selected:
            for scenario in scenarios:
                settings = config.profile(index, scenario)
                check_settings(settings, client_mode=False)
                if counted and settings is not None:
                    raise UsageError("--measure instructions runs the server under callgrind: "
                                     "drop the config's enabled profiling_sets")
    missing = callgrind.missing_tools() if counted else None
    if missing:
        raise UsageError(f"--measure instructions: {missing}")


def _measured(s: Scenario, counted: bool) -> Scenario:
    """Under --measure instructions a fixed request count (instructions.counted_scenario)."""
    return counted_scenario(s) if counted else s


def _quick_env(forced: bool) -> dict[str, bool]:
    return {"quick": True} if quick.enabled(forced) else {}


@dataclass
class ScenarioWork(OnBench):
    """One scenario as a unit of work: its stages on its group's server (shared by the
    group's scenarios, ``shared_server``); what it measured."""

    run: ModuleRun
    group: TestGroup
    scenario: Scenario
    config_set: tuple[tuple[str, str], ...]
    log_dir: Path
    profile: ProfileSettings | None = None  # its profiling set's (with its own overrides)
    requests: int | None = None
    bench: Bench | None = None
    round: int = 1  # its round when sides run in rounds (pipeline/module_sides.py)
    loaded: list[dict[str, str]] | None = None  # MODULE LIST: name and version of each

    @property
    def identity(self) -> str:
        return self._test().trial_id

    @property
    def name(self) -> str:
        return f"scenario {self.group.group}/{self.scenario.id}"

    def describe(self) -> str:
        return f"group {self.group.group} scenario {self.scenario.id}"

    @property
    def shared_server(self) -> Hashable:
        return self.log_dir  # one per profiling set × config set × group

    def execute(self, bench: Bench) -> None:
        self.bench = bench
        config = self.run.options.config
        setup = ServerSetup(False, config.tls_mode, None, 1, self.run.server_cpus, (),
                            self.config_set, self.run.modules)
        tls = bench.tls_files() if config.tls_mode else None
        client = ",".join(map(str, self.run.client_cpus or ())) or None
        self.log_dir.mkdir(parents=True, exist_ok=True)  # callgrind's files of the server
        wrapping = server_wrapping(self.run.options.measure, self.log_dir)
        with bench.servers(self.run.binary, setup, tls, client, **wrapping) as server:
            self._stages(tuple(server.endpoints), server.pids)

    def _stages(self, endpoints: tuple[Endpoint, ...], pids: list[int]) -> None:
        s = self.scenario
        if s.flush_before:
            with self.stage("flush"):
                _send(endpoints, ("FLUSHALL",))
        assert self.bench is not None
        memory = self.run.options.measure == Measure.MEMORY
        empty = self.bench.probe.memory(endpoints) if memory else None
        if s.setup_commands:
            with self.stage("setup"):
                for line in s.setup_commands:
                    _send(endpoints, tuple(shlex.split(line)))
        self.loaded = module_list(endpoints[0]) if self.run.modules else None
        load = self._load()
        self.bench.probe.reset_stats(endpoints)
        before = self.bench.probe.cpu_seconds(pids)
        profile_dir = self.log_dir / f"profile-{file_slug(s.id)}"  # one per scenario
        if self.profile is not None:
            profile_dir.mkdir(parents=True, exist_ok=True)
        measure = self.run.options.measure
        with (counting(measure, pids, self.log_dir) as counted,
              profiling(self.profile, pids, profile_dir) as profiled,
              self.stage("measure")):
            target = Target(endpoints, False, endpoints[0].tls_ca)
            self.outcome.measurement = run_scenario(self.run.kvload, load, target,
                                                    self.log_dir / f"{s.id}.log")
        self.outcome.profile = profile_result(profiled, f"{self.group.group}/{s.id}",
                                              self.run.out_dir)
        self._instructions(counted)
        self._server_side(endpoints, pids, before)
        if memory:
            self._memory(endpoints, empty)

    def _instructions(self, counted: Counted) -> None:
        """--measure instructions: the scenario's callgrind files moved to its own folder
        (the group's server dumps each scenario's under one name), then counted."""
        if not counted.files:
            return
        own = self.log_dir / f"callgrind-{file_slug(self.scenario.id)}"
        own.mkdir(parents=True, exist_ok=True)
        counted.files = [path.replace(own / path.name) for path in counted.files]
        self.outcome.instructions = counted_result(
            counted, self.scenario.first_word, f"{self.group.group}/{self.scenario.id}",
            self.outcome, self.run.out_dir)

    def _memory(self, endpoints: tuple[Endpoint, ...], empty: MemoryInfo | None) -> None:
        """--measure memory: the growth since before the data went in, per the scenario's
        unit (pipeline/run/module_memory.py)."""
        assert self.bench is not None
        probe = self.bench.probe
        with self.stage("settle"):
            module_memory.settle(lambda: probe.memory(endpoints))
        after = probe.memory(endpoints)
        if empty is None or after is None:
            raise DriverError("--measure memory: INFO memory could not be read")
        calls = (self.outcome.server or {}).get("calls") or 0
        unit = module_memory.memory_unit(self.scenario, calls, self.requests,
                                         after["keys"] - empty["keys"],
                                         module_memory.filter_capacity(endpoints))
        added = after["keys"] > empty["keys"]  # MEMORY USAGE of the keys it made, per unit
        record = memory_record(empty, None, after, unit.items,
                               probe.memory_sample(endpoints) if added else [])
        record["unit"] = unit.name
        self.outcome.memory = record

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
        assert self.bench is not None
        stats = self.bench.probe.collect(endpoints).get("commandstats", {})
        word = self.scenario.first_word.lower()
        mine = [v for n, v in stats.items()  # a module keeps its own case: BF.ADD
                if n.lower() == word or n.lower().startswith(word + "|")]
        calls = sum(v["calls"] for v in mine)
        self.outcome.server = {"calls": calls, "commands": {
            n: {"calls": v["calls"], "usec_per_call": v["usec_per_call"]}
            for n, v in stats.items()}}
        if calls:  # the scenario's command's own server time: a sharp signal for A/B
            self.outcome.server["usec_per_call"] = round(
                sum(v["calls"] * (v["usec_per_call"] or 0.0) for v in mine) / calls, 4)
        after = self.bench.probe.cpu_seconds(pids)
        if before is not None and after is not None:
            self.outcome.server["cpu_seconds"] = round(after - before, 3)
            if calls:
                self.outcome.server["cpu_us_per_request"] = round(
                    (after - before) / calls * 1e6, 4)
        self.outcome.checks["dbsize"] = self.bench.probe.keys(endpoints)
        measured = self.outcome.measurement
        per_request = len([p for p in self.scenario.command.split(" ; ") if p.strip()])
        if (measured is not None and measured.requests is not None
                and calls * per_request < measured.requests):
            raise DriverError(f"the server counted {calls} {word.upper()} calls for "
                              f"{measured.requests} requests kvload completed")

    def series(self) -> Series:
        """The series fields its row will have (a bisection names its series from them)."""
        return self._test().series()

    def _test(self) -> ScenarioTest:
        s, options = self.scenario, self.run.options
        identity: dict[str, object] = {
            "group": self.group.group, "scenario": s.id, "command": s.command,
            "config_set": dict(self.config_set), "config": str(options.config.source)}
        if self.profile is not None:  # a profiled pass is a trial of its own
            identity["profile"] = {k: str(v) for k, v in asdict(self.profile).items()}
        return ScenarioTest(s.id, self.group.group, stable_id(identity), s.clients,
                            s.pipeline, self.requests, s.duration, s.warmup, s.keyspacelen,
                            options.config.tls_mode, dict(self.config_set), self.round)

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        s, options = self.scenario, self.run.options
        data = self.run.datasets.get(s.dataset) if s.dataset else None
        details = ScenarioRecord(
            group=self.group.group, id=s.id, type=str(s.type), command=s.command,
            setup_commands=list(s.setup_commands), flush_before=s.flush_before,
            sequential=s.sequential, cluster_execution=str(s.cluster_execution),
            maxdocs=s.maxdocs, dataset=s.dataset,
            dataset_file=str(data.path) if data else None,
            dataset_rows=data.rows if data else None, module=options.module,
            module_paths=[str(m.path) for m in self.run.modules],
            config=str(options.config.source), notes=list(self.run.notes),
            ingestion=s.type == ScenarioType.INGESTION, loaded_modules=self.loaded)
        return build_row(self._test().series(), self.run.context, outcome, timestamp,
                         Details(scenario=details))


def module_list(endpoint: Endpoint) -> list[dict[str, str]]:
    """MODULE LIST's name and version of every loaded module."""
    with RespClient(endpoint, timeout=10) as client:
        reply = client.call("MODULE", "LIST")
    out = []
    for entry in reply if isinstance(reply, list) else []:
        pairs = entry if isinstance(entry, list) else []
        fields = {_text(k): _text(v) for k, v in zip(pairs[::2], pairs[1::2], strict=False)}
        out.append({"name": fields.get("name", ""), "version": fields.get("ver", "")})
    return out


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _send(endpoints: tuple[Endpoint, ...], command: tuple[str, ...]) -> None:
    """A command on every node; an error reply fails the scenario, naming the command."""
    for endpoint in endpoints:
        with RespClient(endpoint, timeout=60) as client:
            try:
                client.call(*command)
            except RespError as exc:
                raise DriverError(f"{' '.join(command)[:120]}: the server answered "
                                  f"{exc}") from None

