"""`kvperf compare`: interleaved A/B of two refs (built), of N ≥ 2 server binaries (the
first is the baseline) or of client harnesses, judged against the first side.

``compare_request`` checks the flags whole before any build — the sides (refs or
binaries), the flags that exclude each other, --min-effect and --water-line, the runs, the
schedule, the plan every side will run (the config parsed once, handed down in the
request), --server-host, the store — so a bad flag never costs a build. ``compare`` runs
the sides (pipeline/sides/interleaved.py, or the definitions' tests), judges every metric
with paired statistics, writes the markdown report, the sweeps' knees and the profiles'
files, and returns what the CLI shows (``Compared``) with the exit status."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from kvperf.analysis.comparison import MetricComparison, compare_paired, compare_sides
from kvperf.analysis.envdiff import EnvDiff, rows_env_diff
from kvperf.analysis.instructions import SeriesInstructions, compare_instructions
from kvperf.analysis.sequential import SeriesStop
from kvperf.analysis.verdict import Rule, Verdict
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode, Schedule
from kvperf.definitions.plan import Plan, Refusal, refusals_of
from kvperf.pipeline.commands.checks import (
    auto_runs,
    build_request,
    checked_runs,
    default_runs,
    fixed_runs,
    interference_policy,
    loaded,
    min_effect,
    plan_definitions,
    rate_sweep_request,
    refuse_server_host,
    remote_request,
    runnable,
    snapshot_cache,
    store_request,
    water_line_rule,
)
from kvperf.pipeline.commands.outputs import (
    Differentials,
    Knees,
    Profiled,
    auto_stops,
    auto_verdicts,
    blocked_sides,
    differential_flamegraphs,
    judge_knees,
    listed,
    profile_artifacts,
    write_report,
)
from kvperf.pipeline.definitions.definition_runs import CompareDefinitionHooks, compare_definitions
from kvperf.pipeline.request.common import SELECTION_ONLY
from kvperf.pipeline.request.options import NO_SNAPSHOTS
from kvperf.pipeline.request.sides import (
    COMPARE_RUNS,
    AutoRuns,
    CompareFlags,
    CompareRequest,
    SidesRequest,
)
from kvperf.pipeline.run.definition_work import DefinitionRun
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.run.rate_sweep import check as check_sweep
from kvperf.pipeline.run.rate_sweep import sweeping
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import SidesHooks
from kvperf.pipeline.sides.interleaved import compare as run_compare
from kvperf.pipeline.sides.sides import PreparedSides, check_schedule, default_schedule, plan_sides
from kvperf.pipeline.world import World
from kvperf.report.comparison import PAIRED_NOTE, markdown, sides_markdown, stops_markdown
from kvperf.report.envdiff import markdown as environment_markdown
from kvperf.report.instructions import markdown as instruction_markdown
from kvperf.results.row import Row, is_ok
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
    specs = None if planned is not None else loaded(flags.config)
    schedule = flags.schedule or (
        default_schedule(flags.config, flags.measure, flags.tool, flags.profile is not None,
                         count, specs) if present and not clients and sweep is None
        else Schedule.ALTERNATE)
    if planned is None:
        check_schedule(flags.config, flags.measure, schedule, count, specs)
    auto = _auto(flags, rule, count, sweep is not None)
    runs = checked_runs(auto.design.max_rounds if auto else
                        default_runs(fixed_runs(flags.runs), flags.measure, COMPARE_RUNS))
    policy = interference_policy(flags.interference, retry_default=True,
                                 measure=flags.measure)
    sides = SidesRequest("compare", runs, flags.config, flags.tool, flags.store.results_dir,
                         flags.label, flags.seed, flags.measure, schedule, flags.profile,
                         flags.keys, policy, clients, flags.clients_dirs, flags.concurrency,
                         sweep, specs, flags.client_repos, auto)
    build = build_request(flags.build) if flags.refs else None
    remote = None
    if planned is None:
        plan = plan_sides(sides)
        check_sweep(plan)
        if auto and sweeping(plan):
            raise UsageError("--runs auto: a config's rate_sweep runs a fixed --runs")
        if clients and sweeping(plan):  # a config's rate_sweep: clients' open loops are run's
            raise UsageError("compare --client: a config's rate_sweep runs with run --client "
                             "(a client's open-loop trials at fixed rates); compare's client "
                             "sides run closed loop")
        if sweeping(plan) and sides.schedule == Schedule.DUET:  # a config's rate_sweep
            if flags.schedule == Schedule.DUET:
                raise UsageError("--schedule duet: a rate sweep's points run alone "
                                 "(alternate), each side at its own rates")
            sides = replace(sides, schedule=Schedule.ALTERNATE)
        remote = remote_request(flags.remote, plan.options, count, lambda: plan.trials)
    return CompareRequest(sides, flags.refs, present, build, rule, effect,
                          store_request(flags.store, live=True), remote, flags.metrics,
                          flags.output, flags.fail_on_regression, skipped, planned, clients,
                          snapshot_cache(flags.definitions) if planned is not None
                          else NO_SNAPSHOTS)


def _auto(flags: CompareFlags, rule: Rule, count: int, sweep: bool) -> AutoRuns | None:
    """``--runs auto`` where it applies: two sides, timing, the config's plan (exit 2
    naming the flag that excludes it)."""
    auto = auto_runs(flags.runs, flags.max_runs, rule, flags.metrics)
    if auto is None:
        return None
    for flag, given in (("--definitions", flags.definitions.given),
                        (f"--measure {flags.measure}", flags.measure != Measure.TIMING),
                        (f"{count} sides", count != 2), ("--rate-sweep", sweep)):
        if given:
            raise UsageError(f"--runs auto does not apply with {flag}: it compares two "
                             "sides' timing rounds; give --runs N")
    return auto


class CompareHooks(SidesHooks, CompareDefinitionHooks, Protocol):
    """What compare reports while it works (builds, the plan, progress, refused tests)."""


@dataclass
class Compared:
    """What a compare found and wrote, in the order the CLI shows it. ``mode``: "pair" (two
    sides, timing), "instructions" (two sides, counted), "many" (N sides, or --measure
    memory: ratios against the baseline), "definitions" (the definitions' tests)."""

    mode: str
    names: tuple[str, ...]  # "A …", "B …" (pair, instructions, definitions)
    labels: dict[str, str]  # side → "A: label" (many)
    verdicts: list[MetricComparison]
    rows: list[Row]  # every side's rows
    directories: str  # where the results are, for the closing line
    seed: int
    failed: int
    exit_code: int
    instructions: list[SeriesInstructions] = field(default_factory=list)
    memory: dict[str, list[Row]] | None = None  # --measure memory: rows by side label
    knees: Knees | None = None
    profile: Profiled | None = None
    differentials: list[Differentials] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)
    report: Path | None = None  # --output, written
    result: SidesResult | None = None
    stops: list[SeriesStop] = field(default_factory=list)  # --runs auto: each series' stop

    @property
    def environment(self) -> EnvDiff:
        """What differs between the sides' environments (analysis/envdiff.py)."""
        if self.result is not None:
            return rows_env_diff(self.result.rows)
        sides: dict[str, list[Row]] = {}  # the definitions' tests: rows by their side
        for row in self.rows:
            sides.setdefault(str(row.get("side") or "?"), []).append(row)
        return rows_env_diff(sides)

    @property
    def saturated(self) -> bool:
        return any(r.get("client_saturated") for r in self.rows)

    def check_store(self) -> None:
        """StoreError (exit 1) if some finished trials did not reach the database."""
        if self.result is not None and self.mode in ("pair", "many"):
            self.result.check_store()


def compare(request: CompareRequest, world: World, hooks: CompareHooks) -> Compared:
    """`kvperf compare` (module doc); the environment diff added to the markdown report."""
    return with_environment(_compare(request, world, hooks))


def _compare(request: CompareRequest, world: World, hooks: CompareHooks) -> Compared:
    if request.definitions is not None:
        hooks.refused(refusals_of(request.definitions))
        return _definitions_compared(request, world, hooks)
    result, plan = run_compare(request, world, hooks)
    if request.count > 2 or request.sides.measure == Measure.MEMORY:
        return _many(request, result, plan)
    names = ((f"A {plan.labels['A']}", f"B {plan.labels['B']}") if request.clients
             else (_name("A", plan.sides["A"]), _name("B", plan.sides["B"])))
    if request.sides.measure != Measure.TIMING:
        return _instructions(request, result, plan, names)
    return _pair(request, result, plan, names)


def _name(side: str, prepared: Prepared | DefinitionRun) -> str:
    ctx = prepared.context
    what = ctx.commit[:12] if ctx.commit else ctx.server_version
    return f"{side} {what}"


def _regressed(verdicts: list[MetricComparison]) -> bool:
    return any(r.decision.verdict is Verdict.REGRESSION for r in verdicts)


def _dirs(plan: PreparedSides) -> tuple[Path, ...]:
    return tuple(p.out_dir for p in plan.sides.values())


def _pair(request: CompareRequest, result: SidesResult, plan: PreparedSides,
          names: tuple[str, str]) -> Compared:
    """Two sides, timing: the paired verdicts, the sweeps' knees, the profiles."""
    a, b = result.a_rows, result.b_rows
    auto = request.sides.auto
    verdicts = (auto_verdicts(result, auto, request.rule, request.metrics) if auto
                else compare_paired(a, b, request.metrics, request.rule))
    dirs = (plan.sides["A"].out_dir, plan.sides["B"].out_dir)
    found = Compared("pair", names, {}, verdicts, a + b, " and ".join(map(str, _dirs(plan))),
                     result.seed, result.failed, 0, result=result)
    found.knees = judge_knees(a, b, dirs, names, request.rule)
    found.profile = profile_artifacts(a + b, plan.out_dir)
    if request.sides.profile or any(r.get("profile") for r in a):  # the config's sets
        found.differentials = listed(differential_flamegraphs(a, b, dirs,
                                                             f"{names[1]} vs {names[0]}"))
    found.blocked = blocked_sides(plan.sides)
    if auto:
        found.stops = auto_stops(result, verdicts, auto, plan.out_dir, dirs)
    found.report = write_report(request.output, lambda: markdown(
        verdicts, [], *names, note=PAIRED_NOTE) + stops_markdown(found.stops))
    found.exit_code = _exit(result.failed, _regressed(verdicts), request)
    return found


def _exit(failed: int, regressed: bool, request: CompareRequest) -> int:
    return 1 if failed or (regressed and request.fail_on_regression) else 0


def _instructions(request: CompareRequest, result: SidesResult, plan: PreparedSides,
                  names: tuple[str, str]) -> Compared:
    """`compare --measure instructions`: the instruction verdicts (markdown with --output)
    and the differential instruction flamegraphs."""
    a, b = result.a_rows, result.b_rows
    counted = compare_instructions(a, b, request.min_effect)
    dirs = _dirs(plan)
    regressed = any(m.decision.verdict is Verdict.REGRESSION
                    for s in counted for m in s.metrics)
    found = Compared("instructions", names, {}, [], a + b, " and ".join(map(str, dirs)),
                     result.seed, result.failed, _exit(result.failed, regressed, request),
                     instructions=counted, result=result)
    found.report = write_report(request.output, lambda: instruction_markdown(
        counted, *names, request.min_effect))
    found.differentials = listed(differential_flamegraphs(
        a, b, (dirs[0], dirs[1]), f"{names[1]} vs {names[0]}", kind="instructions"))
    return found


def _many(request: CompareRequest, result: SidesResult, plan: PreparedSides) -> Compared:
    """N servers (or --measure memory): ratios against the baseline; the memory table's
    rows when measuring memory; a differential flamegraph per side when profiled."""
    labels = {name: f"{name}: {plan.labels.get(name, name)}" for name in result.rows}
    memory = request.sides.measure == Measure.MEMORY
    verdicts = compare_sides(result.rows, "memory" if memory else request.metrics,
                             request.rule)
    rows = [r for side_rows in result.rows.values() for r in side_rows]
    found = Compared("many", (), labels, verdicts, rows,
                     " and ".join(map(str, _dirs(plan))), result.seed, result.failed,
                     _exit(result.failed, _regressed(verdicts), request), result=result)
    if memory:
        found.memory = {labels[n]: side_rows for n, side_rows in result.rows.items()}
    found.profile = profile_artifacts(rows, plan.out_dir)
    base = next(iter(result.rows))
    for name in list(result.rows)[1:] if request.sides.profile else []:
        found.differentials += listed(differential_flamegraphs(
            result.rows[base], result.rows[name],
            (plan.sides[base].out_dir, plan.sides[name].out_dir),
            f"{labels[name]} vs {labels[base]}"))
    found.blocked = blocked_sides(plan.sides)
    found.report = write_report(request.output, lambda: sides_markdown(verdicts, labels))
    return found


def _definitions_compared(request: CompareRequest, world: World,
                          hooks: CompareHooks) -> Compared:
    """`compare A B --definitions …`: the definitions' tests interleaved, judged per test."""
    rows, prepared = compare_definitions(request, world, hooks)
    names = (_name("A", prepared.runs["A"]), _name("B", prepared.runs["B"]))
    verdicts = compare_paired(rows["A"], rows["B"], request.metrics, request.rule)
    every = [r for side_rows in rows.values() for r in side_rows]
    failed = sum(1 for r in every if not is_ok(r))
    found = Compared("definitions", names, {}, verdicts, every,
                     " and ".join(str(run.out_dir) for run in prepared.runs.values()),
                     prepared.seed, failed, _exit(failed, _regressed(verdicts), request))
    found.profile = profile_artifacts(rows["A"] + rows["B"],
                                      prepared.runs["A"].out_dir.parent)
    found.report = write_report(request.output,
                          lambda: markdown(verdicts, [], *names, note=PAIRED_NOTE))
    return found


def with_environment(found: Compared) -> Compared:
    """The environment diff appended to the markdown report, when one was written."""
    if found.report is not None and (diff := found.environment):
        with found.report.open("a") as handle:
            handle.write(environment_markdown(diff))
    return found
