"""`kvperf compare` and `kvperf noise`: interleaved sides, checked whole before any build —
the sides (refs or binaries), the flags that exclude each other, --min-effect and
--water-line, the runs, the schedule, the plan every side will run, --server-host, the
store — so a bad flag never costs a build."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.verdict import DEFAULT_WATER_LINE, Rule
from kvperf.config.model import ProfileSettings
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Concurrency, Measure, Mode, Schedule
from kvperf.definitions.plan import Plan, Refusal
from kvperf.pipeline.request.common import (
    SELECTION_ONLY,
    BuildFlags,
    BuildRequest,
    DefinitionFlags,
    InterferenceFlags,
    RemoteFlags,
    RemoteRequest,
    StoreFlags,
    StoreRequest,
    build_request,
    checked_runs,
    default_runs,
    interference_policy,
    min_effect,
    plan_definitions,
    refuse_server_host,
    remote_request,
    runnable,
    store_request,
    water_line_rule,
)
from kvperf.pipeline.request.rate_sweep import RateSweepFlags, rate_sweep_request
from kvperf.pipeline.run.rate_sweep import check as check_sweep
from kvperf.pipeline.run.rate_sweep import sweeping
from kvperf.pipeline.sides.sides import SidesRequest, check_schedule, default_schedule, plan_sides
from kvperf.server.binary import missing

COMPARE_RUNS = 8  # default interleaved rounds of compare
NOISE_RUNS = 6  # … of noise


@dataclass(frozen=True)
class CompareFlags:
    """`kvperf compare`'s flags as given."""

    refs: tuple[str, ...] = ()
    server_bins: tuple[str, ...] = ()
    config: Path | None = None
    runs: int | None = None
    tool: str | None = None
    label: str | None = None
    seed: int | None = None
    schedule: Schedule | None = None  # None: duet for binaries where the plan allows it
    measure: Measure = Measure.TIMING
    keys: int = 100_000
    profile: ProfileSettings | None = None
    metrics: str = "all"
    output: Path | None = None
    fail_on_regression: bool = False
    water_line: float = DEFAULT_WATER_LINE * 100  # percent
    min_effect: float = DEFAULT_MIN_EFFECT * 100  # percent
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    remote: RemoteFlags = field(default_factory=RemoteFlags)
    definitions: DefinitionFlags = field(default_factory=DefinitionFlags)
    interference: InterferenceFlags = field(default_factory=InterferenceFlags)
    clients: tuple[str, ...] = ()  # --client NAME[:MODEL] twice or more: the sides
    clients_dirs: tuple[Path, ...] = ()
    concurrency: Concurrency | None = None
    rate_sweep: RateSweepFlags = field(default_factory=RateSweepFlags)


@dataclass(frozen=True)
class CompareRequest:
    """Two built refs (A, B) or N ≥ 2 server binaries (the first is the baseline) run
    interleaved and judged against the first; with ``definitions``, their tests instead."""

    sides: SidesRequest
    refs: tuple[str, ...]  # built as A and B, or none
    server_bins: tuple[str, ...]  # the runnable ones, or none
    build: BuildRequest | None
    rule: Rule
    min_effect: float  # a fraction (instruction mode)
    store: StoreRequest
    remote: RemoteRequest | None = None
    metrics: str = "all"
    output: Path | None = None
    fail_on_regression: bool = False
    skipped: tuple[tuple[str, str], ...] = ()  # --server-bin not found, and why
    definitions: tuple[Plan | Refusal, ...] | None = None  # compare --definitions
    clients: tuple[str, ...] = ()  # compare --client: one side per client, one server

    @property
    def count(self) -> int:
        return len(self.clients) or len(self.refs) or len(self.server_bins)


def _clients(flags: CompareFlags) -> tuple[str, ...]:
    """compare --client A --client B …: the sides are clients on one server (the default,
    or one --server-bin)."""
    if len(flags.clients) < 2:
        raise UsageError(f"compare --client needs at least two clients (the first is the "
                         f"baseline), got {len(flags.clients)}")
    if "kvload" in flags.clients:
        raise UsageError("compare --client compares client harnesses; kvload's reference "
                         "line is kvperf run --client NAME --client kvload")
    for flag, given in (("refs", bool(flags.refs)),
                        ("--server-bin twice", len(flags.server_bins) > 1),
                        ("--definitions", flags.definitions.given),
                        ("--measure", flags.measure != Measure.TIMING),
                        ("--schedule duet", flags.schedule == Schedule.DUET),
                        ("--server-host", bool(flags.remote.host))):
        if given:
            raise UsageError(f"{flag} does not apply with compare --client (the sides are "
                             "clients against one server)")
    return flags.clients


def _source(flags: CompareFlags) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The runnable --server-bin (a missing one skipped, with why), once the sides are
    two refs or two or more binaries."""
    if flags.clients:
        return flags.server_bins, ()
    if flags.refs and flags.server_bins:
        raise UsageError("give either two refs or --server-bin twice, not both")
    if flags.refs:
        if len(flags.refs) != 2:
            raise UsageError(f"compare needs exactly two refs (A then B), got "
                             f"{len(flags.refs)}: {' '.join(flags.refs)}")
        return (), ()
    if len(flags.server_bins) < 2:
        raise UsageError(f"give two refs, or --server-bin at least twice (the first is the "
                         f"baseline), got {len(flags.server_bins)} --server-bin")
    why = {path: missing(path) for path in flags.server_bins}
    present = tuple(path for path in flags.server_bins if not why[path])
    skipped = tuple((path, reason) for path, reason in why.items() if reason)
    if len(present) < 2:
        said = "; ".join(f"{path}: {reason}" for path, reason in skipped)
        raise UsageError(f"compare needs two runnable --server-bin, {len(present)} left after "
                         f"skipping the missing ones ({said})")
    return present, skipped


def _definitions(flags: CompareFlags, count: int) -> tuple[Plan | Refusal, ...]:
    """compare --definitions: two sides, none of compare's own plan flags; the tests."""
    refuse_server_host(flags.remote)
    if count != 2:
        raise UsageError(f"--definitions compares two sides, got {count}")
    for flag, given in (("--config", flags.config is not None),
                        ("--schedule duet", flags.schedule not in (None, Schedule.ALTERNATE)),
                        ("--measure", flags.measure != Measure.TIMING),
                        ("--tool", flags.tool is not None)):
        if given:
            raise UsageError(f"{flag} does not apply with --definitions")
    return runnable(plan_definitions(flags.definitions))


def compare_request(flags: CompareFlags) -> CompareRequest:
    """Every check of `kvperf compare` (UsageError, exit 2) before any build or server."""
    rule = water_line_rule(flags.water_line)
    effect = min_effect(flags.min_effect)
    if not flags.definitions.given and flags.definitions.selects:
        raise UsageError(SELECTION_ONLY)
    clients = _clients(flags) if flags.clients else ()
    present, skipped = _source(flags)
    count = len(clients) or len(flags.refs) or len(present)
    planned = _definitions(flags, count) if flags.definitions.given else None
    if flags.measure in (Measure.INSTRUCTIONS, Measure.PERF_INSTRUCTIONS) and count > 2:
        raise UsageError(f"--measure {flags.measure} compares two sides; give --server-bin "
                         "twice")
    sweep = rate_sweep_request(
        flags.rate_sweep, tool=flags.tool, measure=flags.measure, mode=Mode.BOTH,
        clashes=(("--definitions", flags.definitions.given),
                 ("--client", bool(flags.clients)),
                 ("--schedule duet (each side's points run alone)",
                  flags.schedule == Schedule.DUET)))
    schedule = flags.schedule or (
        default_schedule(flags.config, flags.measure, flags.tool, flags.profile is not None,
                         count) if present and not clients and sweep is None
        else Schedule.ALTERNATE)
    if planned is None:
        check_schedule(flags.config, flags.measure, schedule, count)
    runs = checked_runs(default_runs(flags.runs, flags.measure, COMPARE_RUNS))
    policy = interference_policy(flags.interference, retry_default=True,
                                 measure=flags.measure)
    sides = SidesRequest("compare", runs, flags.config, flags.tool, flags.store.results_dir,
                         flags.label, flags.seed, flags.measure, schedule, flags.profile,
                         flags.keys, policy, clients, flags.clients_dirs, flags.concurrency,
                         sweep)
    build = build_request(flags.build) if flags.refs else None
    remote = None
    if planned is None:
        plan = plan_sides(sides)
        check_sweep(plan)
        if sweeping(plan) and sides.schedule == Schedule.DUET:  # a config's rate_sweep
            if flags.schedule == Schedule.DUET:
                raise UsageError("--schedule duet: a rate sweep's points run alone "
                                 "(alternate), each side at its own rates")
            sides = replace(sides, schedule=Schedule.ALTERNATE)
        remote = remote_request(flags.remote, plan.options, count, lambda: plan.trials)
    return CompareRequest(sides, flags.refs, present, build, rule, effect,
                          store_request(flags.store, live=True), remote, flags.metrics,
                          flags.output, flags.fail_on_regression, skipped, planned, clients)


@dataclass(frozen=True)
class NoiseFlags:
    """`kvperf noise`'s flags as given."""

    server_bin: str | None = None
    commit: str | None = None
    config: Path | None = None
    runs: int | None = None
    tool: str | None = None
    label: str | None = None
    seed: int | None = None
    schedule: Schedule = Schedule.ALTERNATE
    build: BuildFlags = field(default_factory=BuildFlags)
    store: StoreFlags = field(default_factory=StoreFlags)
    remote: RemoteFlags = field(default_factory=RemoteFlags)


@dataclass(frozen=True)
class NoiseRequest:
    """One server run against itself, interleaved: a binary, or a ref built once."""

    sides: SidesRequest
    store: StoreRequest
    server_bin: str | None = None
    commit: str | None = None
    build: BuildRequest | None = None
    remote: RemoteRequest | None = None


def noise_request(flags: NoiseFlags) -> NoiseRequest:
    """Every check of `kvperf noise` (UsageError, exit 2) before any build or server."""
    if flags.commit and flags.server_bin:
        raise UsageError("give --commit or --server-bin, not both")
    check_schedule(flags.config, Measure.TIMING, flags.schedule, 2)
    runs = checked_runs(default_runs(flags.runs, Measure.TIMING, NOISE_RUNS))
    sides = SidesRequest("noise", runs, flags.config, flags.tool, flags.store.results_dir,
                         flags.label, flags.seed, Measure.TIMING, flags.schedule)
    build = build_request(flags.build) if flags.commit else None
    plan = plan_sides(sides)
    remote = remote_request(flags.remote, plan.options, 2, lambda: plan.trials)
    return NoiseRequest(sides, store_request(flags.store, live=True), flags.server_bin,
                        flags.commit, build, remote)
