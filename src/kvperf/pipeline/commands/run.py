"""`kvperf run`: one request per way it runs — the config matrix on one server (or
``--mode server/client``), ``--commits`` built and interleaved, ``--definitions``, module
scenarios — chosen and checked whole before any build, server or connection."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Protocol

from kvperf.analysis.clients import ClientLine, client_lines
from kvperf.analysis.gates import GateResult, all_passed, parse_gates
from kvperf.analysis.series import SeriesSummary, summarize
from kvperf.analysis.sweeps import Sweep, sweeps
from kvperf.config.rate_sweep import RateSweep
from kvperf.config.scenarios import detect_module_config, load_module_config, select
from kvperf.config.suites import parse_names, suite_measure
from kvperf.core import secret
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode, Schedule
from kvperf.pipeline.commands.checks import (
    build_request,
    checked_runs,
    interference_policy,
    loaded,
    names,
    plan_definitions,
    rate_sweep_request,
    refuse_module_measure,
    refuse_server_host,
    remote_request,
    snapshot_cache,
    store_request,
)
from kvperf.pipeline.commands.commits import CommitsRan, run_commits
from kvperf.pipeline.commands.definitions import DefinitionsOutcome, run_definitions
from kvperf.pipeline.commands.modules import ModulesOutcome, run_modules
from kvperf.pipeline.commands.outputs import Ran, Swept, ran, rate_sweeps, sweep_plan
from kvperf.pipeline.definitions.definition_runs import DefinitionHooks
from kvperf.pipeline.request.common import SELECTION_ONLY, StoreRequest
from kvperf.pipeline.request.options import (
    DefinitionOptions,
    ModuleOptions,
    RunOptions,
)
from kvperf.pipeline.request.run import (
    AnyRunRequest,
    CommitsRequest,
    DefinitionsRequest,
    ModulesRequest,
    RunFlags,
    RunRequest,
)
from kvperf.pipeline.request.sides import SidesRequest
from kvperf.pipeline.run import quick
from kvperf.pipeline.run.gates import GATES_FILE
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.run.prepare import load_specs
from kvperf.pipeline.run.single import MatrixRun, RunHooks, ScenarioHooks, run_matrix
from kvperf.pipeline.run.storage import Persisted
from kvperf.pipeline.sides.interleaved import SidesHooks
from kvperf.pipeline.sides.sides import check_schedule, plan_sides
from kvperf.pipeline.world import World
from kvperf.plan.matrix import expand
from kvperf.plan.trial import Trial
from kvperf.results.row import Row
from kvperf.store.files import read_histograms


def run_request(flags: RunFlags) -> AnyRunRequest:
    """Every check of `kvperf run` (UsageError/ConfigError, exit 2) before any work."""
    _refuse_clients(flags)
    _rate_sweep(flags)  # its clashes with the other ways to run first
    if flags.definitions.given:
        return _definitions(flags)
    module_config = _module_config(flags)
    if module_config is not None:
        return _modules(flags, module_config)
    if flags.definitions.selects:
        raise UsageError(SELECTION_ONLY)
    if flags.schedule != Schedule.ALTERNATE and not flags.commits:
        raise UsageError("--schedule applies to --commits (several sides), not to one run")
    if flags.gates and flags.commits:
        raise UsageError("--gate applies to one run, not to --commits (compare judges those)")
    if flags.gates and flags.mode == Mode.SERVER:
        raise UsageError("--gate needs measurements: not with --mode server")
    options = _options(flags)
    store = StoreRequest(None) if flags.dry_run else store_request(flags.store, live=True)
    if flags.commits:
        return _commits(flags, options, store)
    tree = None
    if flags.valkey_path is not None and not flags.server_bin and flags.mode != Mode.CLIENT:
        if not (flags.valkey_path / "src").is_dir():
            raise UsageError(f"--valkey-path {str(flags.valkey_path)!r}: not a Valkey source "
                             "tree (no src/)")
        tree = build_request(flags.build, tree=flags.valkey_path)
    remote = remote_request(flags.remote, options, 1, lambda: expand(load_specs(options), 1))
    policy = interference_policy(flags.interference, retry_default=False,
                                 measure=options.measure, mode=options.mode)
    return RunRequest(options, store, flags.dry_run, flags.log_level, tree, remote,
                      flags.generate_password, policy)


def _refuse_clients(flags: RunFlags) -> None:
    """--client runs the config matrix on one server: not --commits, --definitions or
    module scenarios."""
    if not flags.clients:
        return
    for flag, given in (("--commits", bool(flags.commits)),
                        ("--definitions", flags.definitions.given),
                        ("--module-config", flags.module_config is not None),
                        ("--server-host", bool(flags.remote.host))):
        if given:
            raise UsageError(f"{flag} does not apply with --client (client harnesses run the "
                             "config matrix against one server)")


def _definitions(flags: RunFlags) -> DefinitionsRequest:
    if flags.gates or flags.suite or flags.quick:
        raise UsageError("--gate, --suite and --quick apply to kvperf's configs, not to "
                         "--definitions (their kpis are the gates; --override-test-time "
                         "shortens them)")
    refuse_server_host(flags.remote)
    for flag, given in (("--config", flags.config is not None),
                        ("--commits", bool(flags.commits)),
                        ("--baseline", flags.baseline is not None),
                        ("--mode", flags.mode != Mode.BOTH),
                        ("--use-running-server", flags.use_running_server)):
        if given:
            raise UsageError(f"{flag} does not apply with --definitions")
    planned = plan_definitions(flags.definitions)
    options = DefinitionOptions(flags.store.results_dir, flags.label, flags.server_bin,
                                profile=flags.profile,
                                snapshots=snapshot_cache(flags.definitions),
                                reuse_servers=not flags.definitions.no_server_reuse)
    store = StoreRequest(None) if flags.dry_run else store_request(flags.store, live=True)
    return DefinitionsRequest(planned, options, store, flags.dry_run,
                              interference_policy(flags.interference, retry_default=False))


def _module_config(flags: RunFlags) -> Path | None:
    """The module-test config this run uses, if any (``--config`` detected by content)."""
    if flags.module_config is not None:
        if flags.config is not None:
            raise UsageError("give --module-config or --config, not both")
        return flags.module_config
    if flags.config is not None and detect_module_config(flags.config):
        return flags.config
    if flags.groups or flags.scenarios or flags.module:
        raise UsageError("--groups, --scenarios and --module apply to a module-test config "
                         "(--module-config FILE); --module-path works with any config")
    return None


def _modules(flags: RunFlags, path: Path) -> ModulesRequest:
    refuse_server_host(flags.remote)
    for flag, given in (("--commits", bool(flags.commits)),
                        ("--baseline", flags.baseline is not None),
                        ("--mode", flags.mode != Mode.BOTH),
                        ("--use-running-server", flags.use_running_server),
                        ("--profile (give the config profiling_sets)", flags.profile is not None),
                        ("--gate", bool(flags.gates)), ("--suite", flags.suite is not None)):
        if given:
            raise UsageError(f"{flag} does not apply to module scenarios")
    refuse_module_measure(flags.measure)
    config = load_module_config(path)
    selected = select(config, names(flags.groups), names(flags.scenarios))
    options = ModuleOptions(config, selected, flags.store.results_dir, flags.label,
                            flags.server_bin, flags.module, flags.module_paths,
                            quick=flags.quick, measure=flags.measure)
    store = StoreRequest(None) if flags.dry_run else store_request(flags.store, live=True)
    return ModulesRequest(options, store, flags.dry_run,
                          interference_policy(flags.interference, retry_default=False))


def _options(flags: RunFlags) -> RunOptions:
    """The flags of one run as RunOptions (UsageError on bad values)."""
    checked_runs(flags.runs)
    if flags.port is not None and not 0 < flags.port < 65536:
        raise UsageError(f"--port must be 1-65535, got {flags.port}")
    if flags.port is not None and flags.mode == Mode.BOTH and not flags.use_running_server:
        raise UsageError("--port only applies with --mode client/server or "
                         "--use-running-server (servers kvperf starts get a free port)")
    try:
        ipaddress.ip_address(flags.target_ip)
    except ValueError:
        raise UsageError(f"--target-ip {flags.target_ip!r} is not an IP address") from None
    if flags.tool_path is not None and not flags.tool_path.is_file():
        raise UsageError(f"--valkey-benchmark-path {str(flags.tool_path)!r}: no such file")
    if flags.use_running_server and flags.mode == Mode.SERVER:
        raise UsageError("--use-running-server cannot be combined with --mode server")
    parse_gates(flags.gates)  # the syntax first: a malformed gate exits 2 at once
    gate_baseline = (None if flags.commits or flags.baseline is None
                     else Path(os.path.abspath(Path(flags.baseline).expanduser())))
    suites = parse_names(flags.suite) if flags.suite else ()
    mode = Mode.CLIENT if flags.use_running_server else flags.mode
    bind, password = _network(flags)
    return RunOptions(
        config=flags.config, suites=suites, quick=flags.quick, gates=flags.gates,
        gate_baseline=gate_baseline, results_dir=flags.store.results_dir, label=flags.label,
        commit=flags.commit, runs=flags.runs, mode=mode, target_ip=flags.target_ip,
        port=flags.port, server_bin=flags.server_bin, valkey_path=flags.valkey_path,
        tool=flags.tool, tool_path=flags.tool_path,
        measure=suite_measure(suites, flags.measure), profile=flags.profile, keys=flags.keys,
        module_paths=flags.module_paths, bind=bind, password=password, tls_ca=flags.tls_ca,
        clients=flags.clients, clients_dirs=flags.clients_dirs, client_repos=flags.client_repos,
        concurrency=flags.concurrency, rate_sweep=_rate_sweep(flags))


def _rate_sweep(flags: RunFlags) -> RateSweep | None:
    return rate_sweep_request(
        flags.rate_sweep, tool=flags.tool, measure=flags.measure, mode=flags.mode,
        clashes=(("--definitions", flags.definitions.given),
                 ("--module-config", flags.module_config is not None),
                 ("--commits (compare the sides' curves with compare)", bool(flags.commits))))


def _client(flags: RunFlags) -> bool:
    return flags.mode == Mode.CLIENT or flags.use_running_server


def _network(flags: RunFlags) -> tuple[str, secret.Secret | None]:
    """--bind and the password ($KVPERF_SERVER_PASSWORD, read once and removed from the
    environment, or --generate-password) of --mode server, --tls/--tls-ca of --mode client."""
    password = secret.take_env()
    if flags.generate_password:
        if flags.mode != Mode.SERVER:
            raise UsageError("--generate-password applies only with --mode server")
        if password is not None:
            raise UsageError(f"--generate-password with ${secret.SERVER_PASSWORD_ENV} set: "
                             "choose one")
        password = secret.generate()
    bind = _bind(flags, password)
    _tls(flags)
    if not (_client(flags) or flags.mode == Mode.SERVER):
        password = None  # servers kvperf starts for itself stay on loopback, without one
    return bind, password


def _bind(flags: RunFlags, password: secret.Secret | None) -> str:
    bind = flags.bind or "127.0.0.1"
    if flags.bind is not None and flags.mode != Mode.SERVER:
        raise UsageError("--bind applies only with --mode server (use --target-ip to say "
                         "where a client connects)")
    try:
        loopback = secret.is_loopback(bind)
    except ValueError:
        raise UsageError(f"--bind {bind!r} is not an IP address") from None
    if not loopback and password is None:
        raise UsageError(
            f"--bind {bind} reaches beyond this host: the server needs a password. Set "
            f"${secret.SERVER_PASSWORD_ENV}, or pass --generate-password")
    return str(ipaddress.ip_address(bind))


def _tls(flags: RunFlags) -> None:
    if (flags.tls or flags.tls_ca) and not _client(flags):
        raise UsageError("--tls/--tls-ca apply to --mode client (a server kvperf starts gets "
                         "TLS from the config's tls_mode)")
    if flags.tls and flags.tls_ca is None:
        raise UsageError("--tls needs --tls-ca FILE (the CA that signed the server's "
                         "certificate)")
    if flags.tls_ca is not None and not flags.tls:
        raise UsageError("--tls-ca needs --tls")
    if flags.tls_ca is not None and not flags.tls_ca.is_file():
        raise UsageError(f"--tls-ca {str(flags.tls_ca)!r}: no such file")


def _commits(flags: RunFlags, options: RunOptions, store: StoreRequest) -> CommitsRequest:
    if options.mode != Mode.BOTH:
        raise UsageError("--commits builds and starts its own servers: it cannot be combined "
                         "with --mode server/client or --use-running-server")
    if options.server_bin or options.valkey_path:
        raise UsageError("--commits builds its servers: drop --server-bin/--valkey-path")
    refs = ((flags.baseline,) if flags.baseline else ()) + flags.commits
    specs = loaded(flags.config)
    check_schedule(flags.config, flags.measure, flags.schedule, len(refs), specs)
    sides = SidesRequest("commits", quick.runs(flags.runs), flags.config, flags.tool,
                         flags.store.results_dir, flags.label, None, flags.measure,
                         flags.schedule, flags.profile, flags.keys,
                         interference_policy(flags.interference, retry_default=False,
                                             measure=flags.measure), specs=specs)
    build = build_request(flags.build)
    plan = plan_sides(sides)
    remote = remote_request(flags.remote, plan.options, len(refs), lambda: plan.trials)
    return CommitsRequest(sides, refs, bool(flags.baseline), build, store, remote,
                          flags.dry_run)


class RunCommandHooks(RunHooks, SidesHooks, DefinitionHooks, ScenarioHooks, Protocol):
    """What `kvperf run` reports while it works, whatever it runs."""


@dataclass
class MatrixRan:
    """`kvperf run` of a config matrix: planned only (``plan``), served (``served``) or
    run (``ran``, with what was judged and written beside metrics.json)."""

    prepared: Prepared
    plan: list[Trial] | None = None  # --dry-run: the trials
    sweep_plan: str | None = None  # --dry-run of a rate sweep
    served: bool = False  # --mode server: until Ctrl-C
    ran: Ran | None = None
    memory: dict[str, list[Row]] | None = None  # --measure memory: the rows by server
    series: list[SeriesSummary] | None = None  # --runs > 1: per series over runs
    clients: list[ClientLine] = field(default_factory=list)
    sweeps: list[Sweep] = field(default_factory=list)
    swept: Swept | None = None
    gates: list[GateResult] | None = None
    gates_path: Path | None = None
    store: MatrixRun | None = None

    @property
    def gates_failed(self) -> int:
        return sum(1 for r in self.gates or () if not r.passed)

    @property
    def exit_code(self) -> int:
        if self.ran is None:
            return 0
        code = self.ran.exit_code
        if self.ran.summary is None or self.gates is None or all_passed(self.gates):
            return code
        return 1

    def check_store(self) -> None:
        """StoreError (exit 1) if some finished trials did not reach the database."""
        if self.store is not None and self.ran is not None and self.ran.summary is not None:
            self.store.check_store()


def run(request: AnyRunRequest, world: World, hooks: RunCommandHooks
        ) -> MatrixRan | CommitsRan | DefinitionsOutcome | ModulesOutcome:
    """`kvperf run`, whatever the request asks to run."""
    if isinstance(request, DefinitionsRequest):
        return run_definitions(request, world, hooks)
    if isinstance(request, ModulesRequest):
        return run_modules(request, world, hooks)
    if isinstance(request, CommitsRequest):
        return run_commits(request, world, hooks)
    return run_configs(request, world, hooks)


def run_configs(request: RunRequest, world: World, hooks: RunHooks) -> MatrixRan:
    """The config matrix on one server (module doc of pipeline/run/single.py)."""
    done = run_matrix(request, world, hooks)
    prepared = done.prepared
    if request.dry_run:
        return MatrixRan(prepared, plan=prepared.trials, sweep_plan=sweep_plan(prepared))
    if prepared.options.mode == Mode.SERVER:
        return MatrixRan(prepared, served=True)
    title = (f"{prepared.context.label} · {prepared.driver.name} "
             f"{prepared.driver.version}")
    if done.summary is None:
        kept = done.interrupted
        assert kept is not None
        return MatrixRan(prepared, ran=Ran(None, kept.kept, kept.path, title))
    found = MatrixRan(prepared, ran=ran(Persisted(done.summary, 0, prepared.out_dir), title,
                                        prepared.out_dir), store=done)
    _judged(found, done.summary.rows, prepared)
    found.gates = done.gates
    found.gates_path = prepared.out_dir / GATES_FILE if done.gates is not None else None
    return found


def _judged(found: MatrixRan, rows: list[Row], prepared: Prepared) -> None:
    """What the tables show beyond the rows: memory per server, series over runs, the
    clients' lines, the swept keys and the rate sweeps' curves."""
    histograms = partial(read_histograms, prepared.out_dir)
    options = prepared.options
    if options.measure == Measure.MEMORY:
        server = (prepared.binary.display_name if prepared.binary
                  else prepared.context.server_version or prepared.context.label)
        found.memory = {server: rows}
    if options.runs > 1:
        found.series = summarize(rows, histograms)
    found.clients = client_lines(rows, histograms)
    if options.measure == Measure.TIMING:  # speed-ups of timings only
        ordinary = [r for r in rows if (r.get("sweep") or {}).get("role") != "point"]
        found.sweeps = [s for s in sweeps(ordinary)
                        if not (found.clients and s.key == "config_set")]
    found.swept = rate_sweeps(rows, prepared.out_dir, prepared.context.label)
