"""Preparing a run: load and check the config, the tool, the server and the label — every
UsageError (exit 2) before the first server starts."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from kvperf.config.commands import CommandSpec, Seed, stored_as
from kvperf.config.loader import default_config_path, load_config
from kvperf.config.model import BenchmarkSpec, ModuleSpec
from kvperf.config.suites import load_suites
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode, Schedule
from kvperf.driver.base import Driver
from kvperf.driver.registry import resolve_driver
from kvperf.pipeline.request.options import RunOptions
from kvperf.pipeline.run import quick
from kvperf.pipeline.run.client_plan import plan_clients, planned_sets
from kvperf.pipeline.run.duet import DUET_DEFAULT_SECONDS
from kvperf.pipeline.run.gates import plan_gates
from kvperf.pipeline.run.instructions import check_measure
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.run.profiling import check_profile, check_trial_profiles
from kvperf.plan.matrix import expand
from kvperf.plan.trial import Trial
from kvperf.results.records import Env
from kvperf.results.row import RunContext
from kvperf.server.binary import ServerBinary, resolve
from kvperf.server.host import available_cpus, host_facts
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info
from kvperf.sourcebuild.builder import build_facts, find_server


def validate_label(label: str) -> str:
    """A label becomes a directory name: it is data, but it may not leave the results dir."""
    if not label or label in (".", "..") or "/" in label or "\0" in label:
        raise UsageError(f"--label {label!r}: a label may not be empty, '.', '..', or "
                         "contain '/' (it names a directory under --results-dir)")
    return label


def client_mode(options: RunOptions) -> bool:
    return options.mode == Mode.CLIENT


DEFAULT_REQUESTS = 400_000  # the built-in config for tools without --duration


def check_module_paths(paths: tuple[Path, ...]) -> tuple[ModuleSpec, ...]:
    """--module-path files as modules to load (UsageError: missing or not executable)."""
    for path in paths:
        if not path.is_file():
            raise UsageError(f"--module-path {str(path)!r}: no such file (give the built .so)")
        if not os.access(path, os.X_OK):
            raise UsageError(f"--module-path {str(path)!r} is not executable; the server "
                             f"refuses to load it (chmod +x {path})")
    return tuple(ModuleSpec(str(p)) for p in paths)


def load_specs(options: RunOptions) -> list[BenchmarkSpec]:
    """The run's specs: its config as the command loaded it (``options.specs``) or loaded
    now (``config_specs``); the built-in default measures DUET_DEFAULT_SECONDS per stage
    under --schedule duet (its sides must stop together); every --module-path added to
    each spec's modules."""
    specs = list(options.specs) if options.specs is not None else config_specs(options)
    if options.schedule == Schedule.DUET and not (options.config or options.suites):
        specs = [replace(s, requests=None, duration=(DUET_DEFAULT_SECONDS,)) for s in specs]
    extra = check_module_paths(options.module_paths)
    return [replace(s, modules=s.modules + extra) for s in specs] if extra else specs


def config_specs(options: RunOptions) -> list[BenchmarkSpec]:
    """The user's config file (``--config``), the built-in suites, or the built-in default
    (unpinned on a machine without CPUs 0 and 1): the one place a run's config is parsed."""
    cpus = available_cpus()
    if options.config:
        return load_config(options.config, cpus)
    if options.suites:
        return load_suites(options.suites, cpus)
    specs = load_config(default_config_path(), cpus | {0, 1})
    if len(cpus) < 2 or not {0, 1} <= cpus:
        specs = [replace(s, server_cpus=None, client_cpus=None) for s in specs]
    return specs


def _server_binary(options: RunOptions) -> ServerBinary | None:
    if client_mode(options) or options.blocked:
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
    if options.password and client_mode(options) and driver.name != "kvload":
        raise UsageError(f"{driver.name} takes a password only as -a in its argv, which ps "
                         "shows to every user of the host: use --tool kvload (it reads "
                         "the password from its environment)")
    for trial in trials:
        reason = driver.unsupported(trial.load, trial.server.cluster_mode, trial.server.tls)
        if reason is None and client_mode(options) and trial.server.tls and not options.tls_ca:
            reason = "'tls_mode' against a server kvperf did not start needs --tls --tls-ca FILE"
        if reason is None and client_mode(options) and trial.server.replicas:
            reason = ("'replicas' (and 'read_from_replicas') need servers kvperf starts: it "
                      "counts the replicas' calls on the replicas it started")
        if reason is None and trial.load.faults:
            reason = _fault_refusal(trial, driver, options)
        if reason:
            raise UsageError(f"config object {trial.spec_index}: {reason}")


def _fault_refusal(trial: Trial, driver: Driver, options: RunOptions) -> str | None:
    """What a trial with ``faults`` lacks to run them: servers kvperf started (it signals
    them by pid), and kvload (it reconnects and logs acknowledged writes)."""
    if client_mode(options):
        return "'faults' need servers kvperf starts: it signals them by pid"
    if driver.name != "kvload":
        return f"'faults' need --tool kvload ({driver.name} does not reconnect after an error)"
    if trial.load.read_from_replicas != "no":
        return ("'faults' with 'read_from_replicas' are not run yet: kvload's replica reads "
                "and its reconnects would share one list of nodes")
    return None


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
    return Endpoint(options.target_ip, options.port or 6379, options.tls_ca, options.password)


def memory_specs(specs: list[BenchmarkSpec], options: RunOptions) -> list[BenchmarkSpec]:
    """--measure memory: every spec seeds ``options.keys`` keys and measures nothing (one
    keyspace length, no warmup; pipeline and clients do not change what is stored, so the
    first of each, and one command per kind of data); other measures keep the specs."""
    if options.measure != Measure.MEMORY:
        return specs
    if options.keys < 1:
        raise UsageError(f"--keys must be at least 1, got {options.keys}")
    if options.profile is not None:
        raise UsageError("--measure memory times nothing: drop --profile")
    return [replace(s, keyspacelen=(options.keys,), warmup=(0,), pipelines=s.pipelines[:1],
                    clients=s.clients[:1], commands=_one_per_type(s.commands))
            for s in specs]


def _one_per_type(commands: tuple[CommandSpec, ...]) -> tuple[CommandSpec, ...]:
    """The first command of each kind of data (SET and GET both fill strings: SET stays)."""
    kinds: dict[Seed, CommandSpec] = {}
    for command in commands:
        kinds.setdefault(stored_as(command.name, command.seed), command)
    return tuple(kinds.values())


def prepare(options: RunOptions) -> Prepared:
    """Load and check everything; raise UsageError/ConfigError (exit 2) before any server."""
    specs = load_specs(options)
    driver = resolve_driver(options.tool, options.tool_path, options.valkey_path)
    if options.config is None and not driver.capabilities.duration:
        # The built-in config measures 3 s per trial; a tool without --duration runs a
        # request count that takes about as long on these machines instead.
        specs = [replace(s, duration=None, requests=(DEFAULT_REQUESTS,)) if s.duration else s
                 for s in specs]
    check_profile(options)
    specs = memory_specs(specs, options)
    specs = check_measure(options.measure, specs, driver, own_config=options.config is not None,
                          client_mode=client_mode(options))
    specs = quick.shrink(specs, options.quick, swept=options.rate_sweep is not None)
    if client_mode(options) and options.tls_ca:  # --tls: every trial talks TLS
        specs = [replace(s, tls_mode=(True,)) for s in specs]
    trials = expand(specs, quick.runs(options.runs, options.quick))
    check_trial_profiles(options, trials)
    clients = plan_clients(options, specs, trials)
    if not options.clients or clients.reference:
        _check_trials(trials, driver, options)
    binary = _server_binary(options)
    if binary:
        server_version = binary.label
    elif options.mode == Mode.SERVER or options.blocked:
        server_version = None
    else:
        server_version = _running_server_version(client_endpoint(options))
    label = validate_label(options.label or options.commit or server_version or "results")
    built: Env = {**build_facts(binary.path)} if binary else {}
    env = {**host_facts(), "tool": f"{driver.name} {driver.version}",
           "server_binary": str(binary.path) if binary else None,
           **({"build": built} if built else {}),
           "server_source": (binary.source if binary else
                             "not built" if options.blocked else "running server"),
           **dict(options.provenance), **({"quick": True} if quick.enabled(options.quick) else {})}
    revision = (binary.identity() if options.revision_from_binary and binary
                and not options.commit else None)
    context = RunContext(label, options.commit, driver.name, driver.version, server_version, env,
                         options.measure, revision)
    gates = plan_gates(options.gates, options.gate_baseline, specs, _source(options), trials,
                       context, planned_sets(clients, trials) if options.clients else None)
    return Prepared(options, specs, trials, driver, binary, context,
                    options.results_dir / label, gates, clients.subjects, clients.models,
                    clients.reference)


def _source(options: RunOptions) -> str:
    if options.config:
        return str(options.config)
    return f"suite {','.join(options.suites)}" if options.suites else "built-in config"
