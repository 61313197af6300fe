"""`kvperf compare` and `kvperf noise`: interleaved sides, checked whole before any build —
the sides (refs or binaries), the flags that exclude each other, --min-effect and
--water-line, the runs, the schedule, the plan every side will run, --server-host, the
store — so a bad flag never costs a build."""

from __future__ import annotations

from dataclasses import replace

from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode, Schedule
from kvperf.definitions.plan import Plan, Refusal
from kvperf.pipeline.commands.checks import (
    build_request,
    checked_runs,
    default_runs,
    interference_policy,
    min_effect,
    plan_definitions,
    rate_sweep_request,
    refuse_server_host,
    remote_request,
    runnable,
    store_request,
    water_line_rule,
)
from kvperf.pipeline.request.common import SELECTION_ONLY
from kvperf.pipeline.request.sides import COMPARE_RUNS, CompareFlags, CompareRequest, SidesRequest
from kvperf.pipeline.run.rate_sweep import check as check_sweep
from kvperf.pipeline.run.rate_sweep import sweeping
from kvperf.pipeline.sides.sides import check_schedule, default_schedule, plan_sides
from kvperf.server.binary import missing


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
