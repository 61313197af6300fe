"""Checks several commands share, each made once before any work: builds (--repo,
--make-args, --build-jobs, --build-cache), the store (--db, --no-db, --db-timeout),
``--server-host`` and its limits, the definitions selection, --runs, --min-effect,
--water-line, what disturbed trials get (--retry-disturbed, --exclude-disturbed), the rate
sweep's flags, and what a bisection settles. Each returns a typed request piece
(pipeline/request/) or raises UsageError/ConfigError (exit 2)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.sequential import DEFAULT_MAX_ROUNDS, MIN_ROUNDS, Design
from kvperf.analysis.verdict import DEFAULT_RULE, DEFAULT_WATER_LINE, Rule
from kvperf.config.model import BenchmarkSpec, ProfileSettings
from kvperf.config.rate_sweep import (
    RateSweep,
    Slo,
    check_arrivals,
    check_factor,
    check_percents,
    check_point_seconds,
    parse_numbers,
    parse_slo,
)
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode, ProfileMode
from kvperf.definitions.loader import load
from kvperf.definitions.plan import (
    Plan,
    Refusal,
    cap_request_bound,
    plan_all,
    plans_of,
    refusals_of,
)
from kvperf.definitions.resources import Machine, memory_bytes
from kvperf.definitions.selection import Selection, check, select
from kvperf.pipeline.bisect import settle
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.common import (
    INSTRUCTION_RUNS,
    MEMORY_RUNS,
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
from kvperf.pipeline.request.options import InterferencePolicy, RunOptions, Snapshots
from kvperf.pipeline.request.sides import AUTO, AutoRuns
from kvperf.pipeline.run import quick
from kvperf.pipeline.run.prepare import config_specs
from kvperf.plan.trial import Trial
from kvperf.server.host import available_cpus, memory_total
from kvperf.server.remote import DEFAULT_PORTS, parse_ports, parse_target
from kvperf.sourcebuild.builder import default_cache
from kvperf.store.db import resolve_url
from kvperf.store.deadline import parse_seconds as parse_seconds  # --db-timeout's type
from kvperf.store.deadline import resolve_seconds
from kvperf.store.snapshots import DEFAULT_MAX_BYTES


def build_request(flags: BuildFlags, tree: Path | None = None) -> BuildRequest:
    """The build flags checked (UsageError); ``tree``: a --valkey-path built in place."""
    repo = str(tree) if tree is not None else flags.repo
    if repo is None:
        if not Path(".git").exists():
            raise UsageError("building refs needs --repo (a git repository path or URL); the "
                             "current directory is not a git repository")
        repo = "."
    try:
        make_args = tuple(shlex.split(flags.make_args))
    except ValueError as exc:
        raise UsageError(f"--make-args {flags.make_args!r}: {exc}") from None
    if flags.jobs is not None and flags.jobs < 1:
        raise UsageError(f"--build-jobs must be at least 1, got {flags.jobs}")
    env_cache = os.environ.get("KVPERF_BUILD_CACHE")
    cache = flags.cache or (Path(env_cache) if env_cache else default_cache())
    return BuildRequest(repo, make_args, flags.jobs, cache)


def store_request(flags: StoreFlags, *, live: bool = False) -> StoreRequest:
    """--db, else $KVPERF_DB, else <results-dir>/kvperf.db (UsageError for what is no
    database URL); ``live``: a run's writer, bounded by --db-timeout / $KVPERF_DB_TIMEOUT."""
    if flags.no_db:
        return StoreRequest(None)
    url = resolve_url(flags.db, flags.results_dir)
    return StoreRequest(url, resolve_seconds(flags.timeout) if live else None)


def remote_request(flags: RemoteFlags, options: RunOptions, sides: int,
                   trials: Callable[[], Sequence[Trial]]) -> RemoteRequest | None:
    """--server-host checked against what a remote server supports (UsageError); None for
    a local run. ``options``: a side's run; ``trials``: its plan (read only when asked)."""
    if flags.host is None:
        if flags.ssh_config or flags.server_bin or flags.ports:
            raise UsageError("--ssh-config/--remote-server-bin/--remote-ports need "
                             "--server-host")
        return None
    target = parse_target(flags.host)
    ports = parse_ports(flags.ports) if flags.ports is not None else DEFAULT_PORTS
    if options.mode != Mode.BOTH:
        raise UsageError("--server-host starts the servers itself (not with --mode "
                         "server/client, --use-running-server or --definitions)")
    if sides > 1 and flags.server_bin:
        raise UsageError("--remote-server-bin names one binary: the sides of an interleaved "
                         "run are copied instead")
    if options.measure != Measure.TIMING or options.profile:
        raise UsageError("--server-host measures timing only (no --measure "
                         "instructions, no --profile: they run on the server's host)")
    for trial in trials():
        server = trial.server
        if server.cluster_mode or server.tls or server.modules or server.replicas:
            raise UsageError(f"config object {trial.spec_index}: --server-host starts "
                             "standalone servers without TLS, modules or replicas")
    if flags.ssh_config is not None and not flags.ssh_config.is_file():
        raise UsageError(f"--ssh-config {str(flags.ssh_config)!r}: no such file")
    return RemoteRequest(target, flags.ssh_config, flags.server_bin, ports)


def refuse_server_host(flags: RemoteFlags) -> None:
    """Definitions and module scenarios run here only."""
    if flags.host is not None:
        raise UsageError("--server-host does not run --definitions or module scenarios "
                         "yet (they start replicas, clusters and modules here)")


def names(values: tuple[str, ...] | None) -> tuple[str, ...]:
    """Names given as several words and/or comma-separated."""
    return tuple(n.strip() for v in values or () for n in v.split(",") if n.strip())


def plan_definitions(flags: DefinitionFlags) -> tuple[Plan | Refusal, ...]:
    """Load, select and plan the definitions the flags name (UsageError/ConfigError)."""
    if flags.override_test_time is not None and flags.override_test_time < 1:
        raise UsageError(f"--override-test-time must be at least 1, got "
                         f"{flags.override_test_time}")
    if flags.cap_request_bound and flags.override_test_time is None:
        raise UsageError("--cap-request-bound caps request-bound clients at "
                         "--override-test-time's seconds: give --override-test-time S")
    selection = Selection(flags.tests_regexp, flags.priority_lower, flags.priority_upper,
                          names(flags.tested_groups), names(flags.tested_commands),
                          names(flags.topologies))
    loaded = load(flags.paths or ())
    check(selection, loaded.definitions, set(loaded.topologies))
    chosen = select(loaded.definitions, selection)
    if not chosen:
        raise UsageError(f"the selection matches none of the {len(loaded.definitions)} "
                         "loaded definition(s)")
    override = quick.test_time(flags.override_test_time)
    planned = plan_all(chosen, loaded.topologies, override, selection.topologies,
                       file_exists=Path.is_file,
                       machine=None if flags.ignore_resources else this_machine(),
                       rdbs=dataset_rdbs(flags.dataset_rdbs))
    return cap_request_bound(planned, override) if flags.cap_request_bound and override \
        else planned


def dataset_rdbs(given: tuple[str, ...]) -> dict[str, Path]:
    """``--dataset-rdb NAME=PATH`` values by NAME (UsageError: not NAME=PATH, no such
    file)."""
    found: dict[str, Path] = {}
    for value in given:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--dataset-rdb {value!r}: give NAME=PATH (NAME: the "
                             "definition's dataset URL or its file name)")
        if not Path(path).expanduser().is_file():
            raise UsageError(f"--dataset-rdb {value!r}: no such file {path}")
        found[name] = Path(path).expanduser().resolve()
    return found


def snapshot_cache(flags: DefinitionFlags) -> Snapshots:
    """The snapshot cache's directory (None: --no-snapshots) and size cap: --snapshot-cache,
    else $KVPERF_SNAPSHOT_CACHE, else <build cache's base>/snapshots; the cap from
    $KVPERF_SNAPSHOT_CACHE_SIZE (``20g``, ``500Mi``), else 20 GiB."""
    return Snapshots(None if flags.no_snapshots else snapshot_dir(flags.snapshot_cache),
                     snapshot_max_bytes(os.environ.get("KVPERF_SNAPSHOT_CACHE_SIZE")))


def snapshot_dir(given: Path | None) -> Path:
    env = os.environ.get("KVPERF_SNAPSHOT_CACHE")
    return given or (Path(env) if env else default_cache() / "snapshots")


def snapshot_max_bytes(text: str | None) -> int:
    """A size cap (``20g``, ``500Mi``, bytes) or the default 20 GiB; UsageError if none."""
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return memory_bytes(text)
    except ValueError as exc:
        raise UsageError(f"snapshot cache size {text!r}: {exc}") from None


def this_machine() -> Machine:
    """This machine's memory (MemTotal) and the CPUs kvperf may use."""
    try:
        return Machine(memory_total(), len(available_cpus()))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read this machine's memory to check the definitions' "
                         f"resources ({exc}); --ignore-resources skips the check") from None


def runnable(planned: tuple[Plan | Refusal, ...]) -> tuple[Plan | Refusal, ...]:
    """``planned`` when some test can run; else UsageError naming why each cannot."""
    if plans_of(planned):
        return planned
    reasons = [f"{name} [{topology}]: {why}" for name, topology, why in refusals_of(planned)]
    more = f"\n  … and {len(reasons) - 10} more" if len(reasons) > 10 else ""
    raise UsageError("none of the selected definitions can run here:\n  "
                     + "\n  ".join(reasons[:10]) + more)


def checked_runs(runs: int) -> int:
    """Rounds as asked (UsageError below 1), capped in quick mode (pipeline/run/quick.py)."""
    if runs < 1:
        raise UsageError(f"--runs must be at least 1, got {runs}")
    return quick.runs(runs)


def default_runs(runs: int | None, measure: Measure, timing_default: int) -> int:
    """--runs as given, else one for memory (it repeats to the byte), two for instruction
    counts (they repeat to ~0.1%), else the command's default."""
    if runs is not None:
        return runs
    if measure == Measure.MEMORY:
        return MEMORY_RUNS
    return INSTRUCTION_RUNS if measure != Measure.TIMING else timing_default


def auto_runs(runs: int | str | None, max_runs: int | None, rule: Rule = DEFAULT_RULE,
              metrics: str = "all") -> AutoRuns | None:
    """``--runs auto`` (with ``--max-runs``, default 12, at least the rounds before the
    first look) as its design; None for a number of runs (``--max-runs`` then refused)."""
    if runs != AUTO:
        if max_runs is not None:
            raise UsageError("--max-runs applies with --runs auto (the rounds it may add up "
                             "to); give --runs auto, or drop --max-runs")
        return None
    limit = DEFAULT_MAX_ROUNDS if max_runs is None else max_runs
    if limit < MIN_ROUNDS:
        raise UsageError(f"--max-runs must be at least {MIN_ROUNDS} (--runs auto looks first "
                         f"after {MIN_ROUNDS} rounds), got {limit}")
    return AutoRuns(Design(limit), rule, metrics)


def fixed_runs(runs: int | str | None) -> int | None:
    """--runs as a number (None: not given, or auto)."""
    return runs if isinstance(runs, int) else None


def refuse_module_measure(measure: Measure) -> None:
    """Module scenarios measure timing, timing and memory (pipeline/run/module_memory.py) or
    callgrind instructions; hardware counts (perf stat) are not built for them: exit 2."""
    if measure == Measure.PERF_INSTRUCTIONS:
        raise UsageError(f"--measure {measure} does not apply to module scenarios (they "
                         "measure timing, memory or callgrind instructions)")


def min_effect(percent: float = DEFAULT_MIN_EFFECT * 100) -> float:
    """--min-effect PCT as a fraction (UsageError outside [0, 100))."""
    if not 0 <= percent < 100:
        raise UsageError(f"--min-effect must be a percentage in [0, 100), got {percent}")
    return percent / 100


def water_line_rule(percent: float = DEFAULT_WATER_LINE * 100) -> Rule:
    """The verdict rule with --water-line PCT (UsageError outside (0, 100))."""
    if not 0 < percent < 100:
        raise UsageError(f"--water-line must be a percentage in (0, 100), got {percent:g}")
    return Rule(water_line=percent / 100)


# Sets the command's default for --retry-disturbed (1/0): a machine known to be shared, such
# as the tests' parallel lane, where a rerun would be disturbed again.
RETRY_ENV = "KVPERF_RETRY_DISTURBED"


_ON, _OFF = ("1", "yes", "true", "on"), ("0", "no", "false", "off")


def retry_default_of(command_default: bool) -> bool:
    """The command's default for --retry-disturbed, unless $KVPERF_RETRY_DISTURBED says
    otherwise (UsageError for a value that is not 1/0, yes/no, true/false, on/off)."""
    value = os.environ.get(RETRY_ENV, "").strip().lower()
    if not value:
        return command_default
    if value not in _ON + _OFF:
        raise UsageError(f"{RETRY_ENV}={value!r}: give 1 (retry disturbed trials) or 0")
    return value in _ON


def interference_policy(flags: InterferenceFlags, *, retry_default: bool,
                        measure: Measure = Measure.TIMING,
                        mode: Mode = Mode.BOTH) -> InterferencePolicy:
    """What disturbed trials get (pipeline/run/model.InterferencePolicy): retried once
    (``retry_default``, or $KVPERF_RETRY_DISTURBED, unless a flag says otherwise), excluded
    or kept. UsageError for the flags where nothing is timed: --mode server, --measure
    instructions/memory (those numbers do not depend on other processes, so no trial of
    theirs is judged)."""
    if mode == Mode.SERVER and flags.given:
        raise UsageError("--retry-disturbed/--exclude-disturbed judge measured trials: "
                         "--mode server measures nothing")
    if measure != Measure.TIMING:
        if flags.retry or flags.exclude:
            raise UsageError(f"--retry-disturbed/--exclude-disturbed judge timings; --measure "
                             f"{measure} counts what the server does, which other processes "
                             "do not change")
        return InterferencePolicy(threshold=None)
    return InterferencePolicy(retry_default_of(retry_default) if flags.retry is None
                              else flags.retry, flags.exclude)


def rate_sweep_request(flags: RateSweepFlags, *, tool: str | None, measure: Measure,
                       mode: Mode, clashes: tuple[tuple[str, bool], ...] = ()
                       ) -> RateSweep | None:
    """The run's sweep (None without --rate-sweep); every refusal names its flag."""
    if not flags.given:
        if flags.details():
            raise UsageError(f"{flags.details()[0]} needs --rate-sweep")
        return None
    if tool is not None and tool != "kvload":
        raise UsageError(f"--rate-sweep needs kvload's open loop (--tool kvload), not "
                         f"--tool {tool}")
    if measure != Measure.TIMING:
        raise UsageError(f"--rate-sweep measures latency over time: not with --measure "
                         f"{measure}")
    if mode == Mode.SERVER:
        raise UsageError("--rate-sweep drives load: not with --mode server")
    for flag, given in clashes:
        if given:
            raise UsageError(f"--rate-sweep does not apply with {flag}")
    if flags.rates is not None and flags.steps is not None:
        raise UsageError("--rates and --rate-steps: give one (explicit rates, or percents "
                         "of the saturation rps)")
    try:
        slo = parse_slo(flags.slo) if flags.slo is not None else None
    except ValueError as exc:
        raise UsageError(f"--slo: {exc}") from None
    try:
        return _sweep(flags, slo)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _sweep(flags: RateSweepFlags, slo: Slo | None) -> RateSweep:
    """The sweep of the flags (ValueError naming the flag)."""
    default = RateSweep()
    percents = (check_percents(parse_numbers(flags.steps, "--rate-steps"), "--rate-steps")
                if flags.steps is not None else default.percents)
    rates = parse_numbers(flags.rates, "--rates") if flags.rates is not None else None
    seconds = (flags.point_seconds if flags.point_seconds is not None
               else default.point_seconds)
    factor = flags.factor if flags.factor is not None else default.factor
    return RateSweep(percents, rates, check_point_seconds(seconds, "--point-seconds"), slo,
                     check_factor(factor, "--knee-factor"),
                     check_arrivals(flags.arrivals or default.arrivals, "--arrivals"))


def change_point_base(*, config: Path | None, runs: int | None, max_runs: int | None,
                      build: BuildFlags, store: StoreFlags) -> BisectRequest:
    """`kvperf regressions --bisect`: what every change point's bisection shares (timing,
    the flags' config, runs and budget), checked before the history is read."""
    checked = build_request(build)
    base = BisectRequest("", "", checked.repo, runs=runs, max_runs=max_runs, config=config,
                         results_dir=store.results_dir, build=checked,
                         store=store_request(store, live=True))
    settle(BisectRequest("", "", checked.repo, measure=Measure.TIMING, runs=runs,
                         max_runs=max_runs))
    return base


def profile_settings(given: bool, frequency: int, call_graph: str, mode: str,
                     delay: float, duration: float | None) -> ProfileSettings | None:
    """--profile and its flags as ProfileSettings (None without --profile; the values are
    checked by pipeline/run/profiling.py with the plan)."""
    if not given:
        return None
    return ProfileSettings(frequency, call_graph, ProfileMode(mode), delay, duration)




def loaded(config: Path | None) -> tuple[BenchmarkSpec, ...]:
    """The config of an interleaved run, parsed once here and handed to every side (its
    checks, its schedule, each side's plan) in the request."""
    return tuple(config_specs(RunOptions(config=config)))
