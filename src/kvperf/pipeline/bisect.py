"""`kvperf bisect`'s workflow: the first commit of GOOD..BAD that moved a series' metric.

Every input check first (config, series, metric, measure, refs, GOOD an ancestor of BAD;
exit 2), then step 0 (GOOD vs BAD) finds the direction, then one step per commit the
search (analysis/bisect.py) picks. A step is one or more batches of interleaved runs of
GOOD and the commit (pipeline/sides/sides.py, as compare runs them), each batch in its own
directory under ``<results-dir>/<label>/`` and the log (analysis/bisect_log.py) replaced
after every batch, so an interruption loses no finished run and ``--resume`` goes on from
where it stopped.

With benchmark definitions (``--definitions``) instead of a config, each batch runs the
selected definitions' tests interleaved on GOOD and the commit, as `compare --definitions`
does; the series is a test (its name, and cluster_mode or io=N of its topology).

The world is reached through ``Bench`` (build a commit, run sides, list commits):
``LiveBench`` is the real one (World.builder, interleaved runs with the live store, progress
to the CLI's hooks); tests pass fakes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from kvperf.analysis.bisect import (
    DEFAULT_RUNS,
    TIMING_METRICS,
    Mark,
    SeriesEffect,
    check_metric,
    classify,
    effects,
    more_runs,
    pick_series,
    series_text,
)
from kvperf.analysis.bisect_log import (
    LOG_NAME,
    Batch,
    BisectLog,
    Commit,
    Step,
    check_same_question,
    from_json,
    to_json,
)
from kvperf.analysis.comparison import GroupKey, describe_group
from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT as INSTRUCTION_MIN_EFFECT
from kvperf.analysis.instructions import MovedFunction, compare_instructions
from kvperf.analysis.regressions import Finding
from kvperf.analysis.sequential import budget_rule
from kvperf.analysis.verdict import Verdict
from kvperf.core.errors import BuildError, UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan
from kvperf.pipeline.definitions.definition_runs import DefinitionHooks, run_on_sides
from kvperf.pipeline.definitions.definitions import definition_series
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.options import RunOptions
from kvperf.pipeline.request.sides import SidesRequest
from kvperf.pipeline.run.builds import build_one
from kvperf.pipeline.run.prepare import prepare, validate_label
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import SidesHooks, run_interleaved
from kvperf.pipeline.sides.sides import Side, side_from_build
from kvperf.pipeline.world import World
from kvperf.plan.trial import Trial
from kvperf.results.row import Row
from kvperf.server import callgrind
from kvperf.sourcebuild.builder import Build
from kvperf.sourcebuild.git_log import CommitInfo
from kvperf.store.files import read_rows, write_json_atomic

BUDGET_FACTOR = 3  # --max-runs default: 3 × --runs


class Bench(Protocol):
    """The bisection's way to the world."""

    def resolve(self, ref: str) -> str: ...

    def commits(self, good: str, bad: str) -> list[CommitInfo]: ...

    def build(self, sha: str) -> Build: ...

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult: ...

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult: ...


class BisectObserver(Protocol):
    def started(self, log: BisectLog, resumed: int) -> None: ...

    def step_finished(self, log: BisectLog, step: Step) -> None: ...


class BenchHooks(SidesHooks, DefinitionHooks, Protocol):
    """What LiveBench reports: fetches and builds, each batch's plan and progress."""


class LiveBench:
    """The real Bench: commits built through World.builder, each batch run interleaved (or
    as the definitions' tests) with the live store; ``check_stores`` after the bisection."""

    def __init__(self, request: BisectRequest, world: World, hooks: BenchHooks) -> None:
        assert request.build is not None
        self.world, self.hooks, self.store = world, hooks, request.store
        self.snapshots = request.snapshots
        self.builder = world.builder(request.build)
        self.results: list[SidesResult] = []

    def resolve(self, ref: str) -> str:
        with self.hooks.fetching(self.builder.repo):
            return self.builder.resolve(ref)

    def commits(self, good: str, bad: str) -> list[CommitInfo]:
        return self.builder.first_parent_range(good, bad)

    def build(self, sha: str) -> Build:
        return build_one(self.builder, "commit", sha, self.hooks)

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult:
        result, _ = run_interleaved(request, sides, self.store, None, self.world, self.hooks)
        self.results.append(result)
        return result

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult:
        rows, prepared = run_on_sides(plans, sides, out_dir, runs, seed, None, self.store,
                                      self.world, self.hooks, snapshots=self.snapshots)
        return SidesResult(rows, prepared.seed)  # the store was checked by run_on_sides

    def check_stores(self) -> None:
        """StoreError (exit 1) if some batch's trials did not reach the database."""
        for done in self.results:
            done.check_store()


def default_measure() -> Measure:
    """Instructions where valgrind's callgrind is installed, else timing."""
    return Measure.TIMING if callgrind.missing_tools() else Measure.INSTRUCTIONS


def trial_series(trial: Trial) -> GroupKey:
    """The series fields of a planned trial, as its rows will have them (describe_group's)."""
    s, ld = trial.server, trial.load
    return (("command", ld.command.name), ("data_size", ld.data_size),
            ("pipeline", ld.pipeline), ("clients", ld.clients), ("io_threads", s.io_threads),
            ("cluster_mode", s.cluster_mode), ("tls", s.tls))


def plan_series(request: BisectRequest) -> str:
    """Check the plan as a side would (exit 2 before any build) and name its series."""
    assert request.measure is not None
    if request.definitions:
        tests = list(dict.fromkeys(definition_series(p) for p in request.definitions))
        return describe_group(pick_series(request.series, tests))
    planned = prepare(RunOptions(config=request.config, tool=request.tool,
                                 measure=request.measure, blocked="planning", label="plan"))
    keys = list(dict.fromkeys(trial_series(t) for t in planned.trials))
    return describe_group(pick_series(request.series, keys))


def _repo_name(repo: str) -> str:
    path = Path(repo)
    return str(path.resolve()) if path.exists() else repo


def new_log(request: BisectRequest, series: str, bench: Bench) -> BisectLog:
    """The question, with GOOD..BAD listed (UsageError when GOOD is no ancestor of BAD)."""
    good, bad = bench.resolve(request.good), bench.resolve(request.bad)
    if good == bad:
        raise UsageError(f"GOOD {request.good!r} and BAD {request.bad!r} are the same commit")
    infos = bench.commits(good, bad)
    if not infos or infos[-1].sha != bad:
        raise UsageError(f"BAD {request.bad!r} is not reached from GOOD {request.good!r} "
                         "along first parents")
    assert request.measure and request.metric and request.runs and request.max_runs
    commits = [Commit(good, f"GOOD ({request.good})")] + \
        [Commit(c.sha, c.subject) for c in infos]
    config = ("definitions: " + ", ".join(request.definition_paths)
              if request.definitions else
              str(request.config.resolve()) if request.config else "built-in")
    return BisectLog(_repo_name(request.repo), good, bad, series, request.metric,
                     str(request.measure), request.runs, request.max_runs, commits, config)


def bisect_dir(request: BisectRequest, log: BisectLog) -> Path:
    label = request.label or f"bisect-{log.good[:8]}-{log.bad[:8]}"
    return request.results_dir / validate_label(label)


def open_log(request: BisectRequest, wanted: BisectLog, directory: Path) -> BisectLog:
    """A new log, or with --resume the one in ``directory`` (same question)."""
    path = directory / LOG_NAME
    if not request.resume:
        if path.exists():
            raise UsageError(f"{path} exists: add --resume to continue that bisection, or "
                             "--label to start another")
        return wanted
    if not path.is_file():
        raise UsageError(f"--resume: no bisect log at {path}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise UsageError(f"--resume: {path} is not JSON ({exc.msg})") from None
    log = from_json(data, str(path))
    check_same_question(log, wanted, str(path))
    return log


@dataclass
class BisectResult:
    """The finished log, where it lives, whether GOOD and BAD differ at all, and (instruction
    mode) the functions that moved at the first bad commit's step."""

    log: BisectLog
    directory: Path
    differ: bool
    moved: list[MovedFunction]


def _flag(verdict: Verdict) -> Verdict:
    """Step 0's direction: the verdict itself when flagged."""
    return verdict if verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) \
        else Verdict.REGRESSION


def _renumbered(rows: list[Row], offset: int) -> list[Row]:
    """A later batch's runs follow the earlier ones' (pairs stay (trial, run) within it)."""
    out: list[Row] = []
    for row in rows:
        copy = row.copy()
        copy["run"] = row["run"] + offset
        out.append(copy)
    return out


class Bisection:
    """One bisection's steps over its log (module doc)."""

    def __init__(self, request: BisectRequest, log: BisectLog, directory: Path, bench: Bench,
                 observer: BisectObserver) -> None:
        self.request, self.log, self.directory = request, log, directory
        self.bench, self.observer = bench, observer
        self._builds: dict[str, Build] = {}
        self._rows: dict[int, tuple[list[Row], list[Row]]] = {}

    def save(self) -> None:
        write_json_atomic(self.directory / LOG_NAME, to_json(self.log))

    def build(self, sha: str) -> Build:
        if sha not in self._builds:
            self._builds[sha] = self.bench.build(sha)
        return self._builds[sha]

    def run(self) -> BisectResult:
        log = self.log
        self.observer.started(log, sum(1 for s in log.steps if s.mark))
        pending = log.pending()
        if pending is not None:
            self.decide(pending)
        if not log.steps:
            self.decide(self._new_step(len(log.commits) - 1))
        if log.direction is None:
            return BisectResult(log, self.directory, False, [])
        while (index := log.next_index()) is not None:
            self.decide(self._new_step(index))
        return BisectResult(log, self.directory, True, self.moved())

    def _new_step(self, index: int) -> Step:
        commit = self.log.commits[index]
        step = Step(len(self.log.steps), index, commit.sha, commit.subject)
        self.log.steps.append(step)
        return step

    def decide(self, step: Step) -> None:
        """Build, run batches until the verdict settles (or the budget is spent), mark."""
        good = self.build(self.log.good)
        if not good.ok:
            raise BuildError(f"GOOD {self.log.good[:12]} does not build: {good.error}")
        build = self.build(step.sha)
        if not build.ok:
            if step.number == 0:
                raise BuildError(f"BAD {step.sha[:12]} does not build: {build.error}")
            lines = (build.error or "build failed").splitlines()
            first_error = [ln.strip() for ln in lines[1:] if "error" in ln][:1]
            step.build_error = "; ".join(lines[:1] + first_error)
            step.mark = Mark.SKIP
        else:
            step.mark = self._settle(step, good, build)
        if step.number == 0 and step.mark is Mark.BAD:
            target = step.effect(self.log.series)
            self.log.direction = target.verdict if target else None
        self.save()
        self.observer.step_finished(self.log, step)

    def _settle(self, step: Step, good: Build, build: Build) -> Mark:
        log = self.log
        add = log.runs
        while True:
            if step.batches:
                target = self._judge(step)
                verdict = target.verdict if target else Verdict.INSUFFICIENT_DATA
                mark = classify(verdict, log.direction or _flag(verdict))
                if mark is not None:
                    return mark
                add = more_runs(step.runs, log.runs, log.max_runs,
                                target.runs_needed if target else None,
                                each_look=self.request.measure == Measure.TIMING)
                if add == 0:
                    return Mark.SKIP
            self._batch(step, add, good, build)

    def _judge(self, step: Step) -> SeriesEffect | None:
        a, b = self.rows(step)
        assert self.request.measure is not None
        step.effects = effects(a, b, self.request.measure, self.log.metric,
                               self.request.min_effect,
                               budget_rule(self.log.runs, self.log.max_runs))
        return step.effect(self.log.series)

    def _batch(self, step: Step, runs: int, good: Build, build: Build) -> None:
        label = self._free_label(step)
        seed = self.request.seed
        request = SidesRequest("bisect", runs, self.request.config, self.request.tool,
                               self.directory, label,
                               None if seed is None else seed + 100 * step.number +
                               len(step.batches),
                               self.request.measure or Measure.TIMING)
        sides = [side_from_build("A", good), side_from_build("B", build)]
        if self.request.definitions:
            result = self.bench.run_definitions(self.request.definitions, sides,
                                                self.directory / label, runs, request.seed)
        else:
            result = self.bench.run(request, sides)
        a, b = self.rows(step)
        offset = step.runs
        self._rows[step.number] = (a + _renumbered(result.a_rows, offset),
                                   b + _renumbered(result.b_rows, offset))
        ran = max((r["run"] for r in result.a_rows + result.b_rows), default=runs)
        step.batches.append(Batch(label, ran, result.seed))  # KVPERF_QUICK caps the runs
        self.save()

    def _free_label(self, step: Step) -> str:
        """The next batch's directory; one an interrupted batch left (rows of runs the log
        never recorded) is kept as it is, not appended to."""
        k = len(step.batches) + 1
        while (self.directory / f"{step.number:02d}-{step.sha[:12]}-{k}").exists():
            k += 1
        return f"{step.number:02d}-{step.sha[:12]}-{k}"

    def rows(self, step: Step) -> tuple[list[Row], list[Row]]:
        """A step's rows so far (read back from its batches' directories after --resume)."""
        if step.number not in self._rows:
            a: list[Row] = []
            b: list[Row] = []
            offset = 0
            for batch in step.batches:
                base = self.directory / batch.label
                a += _renumbered(read_rows(base / "A" / "metrics.json"), offset)
                b += _renumbered(read_rows(base / "B" / "metrics.json"), offset)
                offset += batch.runs
            self._rows[step.number] = (a, b)
        return self._rows[step.number]

    def moved(self) -> list[MovedFunction]:
        """Instruction mode: the series' moved functions at the first bad commit's step."""
        found = self.log.outcome()
        step = self.log.step_of(found.bad)
        if self.request.measure != Measure.INSTRUCTIONS or not found.found or step is None:
            return []
        a, b = self.rows(step)
        assert self.request.min_effect is not None  # settled for instruction mode
        for series in compare_instructions(a, b, self.request.min_effect):
            if describe_group(series.group) == self.log.series:
                return series.moved
        return []


def bisect(request: BisectRequest, bench: Bench, observer: BisectObserver) -> BisectResult:
    """The whole workflow (module doc)."""
    request = settle(request)
    series = plan_series(request)
    wanted = new_log(request, series, bench)
    directory = bisect_dir(request, wanted)
    log = open_log(request, wanted, directory)
    return Bisection(request, log, directory, bench, observer).run()


class BisectHooks(BenchHooks, BisectObserver, Protocol):
    pass


def run_bisect(request: BisectRequest, world: World, hooks: BisectHooks) -> BisectResult:
    """`kvperf bisect` on the live bench; every batch's store checked at the end."""
    bench = LiveBench(request, world, hooks)
    result = bisect(request, bench, hooks)
    bench.check_stores()
    return result


@dataclass(frozen=True)
class ChangePoint:
    """A change point to bisect: the last commit before it, the first after, the series
    (``--series`` words) and the metric (``kvperf regressions --bisect``)."""

    good: str
    bad: str
    series: str
    metric: str


def change_point_request(base: BisectRequest, point: ChangePoint, bench: Bench
                         ) -> BisectRequest | str:
    """The bisection of a change point, or why there is none: its range holds no commit
    that was not measured (the first commit after it is the change), or its metric is not
    one timing measures."""
    if point.metric not in TIMING_METRICS:
        return f"{point.metric} is not a metric bisect measures"
    commits = bench.commits(bench.resolve(point.good), bench.resolve(point.bad))
    if len(commits) < 2:
        return f"no unmeasured commit between them: the change is {point.bad[:12]}"
    label = f"bisect-{point.good[:8]}-{point.bad[:8]}-{point.metric}-" + \
        "_".join(point.series.split())
    return replace(base, good=point.good, bad=point.bad, series=point.series,
                   metric=point.metric, measure=Measure.TIMING, label=label,
                   resume=(base.results_dir / label / LOG_NAME).is_file())


class ChangePointHooks(BisectHooks, Protocol):
    def not_bisected(self, what: str, why: str) -> None: ...

    def bisecting(self, what: str) -> None: ...

    def bisected(self, what: str, result: BisectResult) -> None: ...


def bisect_change_points(base: BisectRequest, findings: Iterable[Finding], world: World,
                         hooks: ChangePointHooks) -> list[tuple[Finding, BisectResult]]:
    """Bisect every change point whose range holds unmeasured commits (resumed when its
    log exists); the batches' stores checked at the end. Returns each bisected change
    point with its result (store/alerts.py names the culprit from it)."""
    findings = list(findings)
    done: list[tuple[Finding, BisectResult]] = []
    if not findings:
        return done
    bench = LiveBench(base, world, hooks)
    for f in findings:
        point = ChangePoint(f.last_before.sha, f.first_after.sha, series_text(f.params),
                            f.metric)
        what = f"{point.series} {point.metric} {f.commit_range}"
        request = change_point_request(base, point, bench)
        if isinstance(request, str):
            hooks.not_bisected(what, request)
            continue
        hooks.bisecting(what)
        result = bisect(request, bench, hooks)
        hooks.bisected(what, result)
        done.append((f, result))
    bench.check_stores()
    return done


def settle(request: BisectRequest) -> BisectRequest:
    """The request with its defaults filled in and its numbers checked (UsageError)."""
    if request.definitions:
        for flag, given in (("--config", request.config), ("--tool", request.tool),
                            ("--measure instructions",
                             request.measure == Measure.INSTRUCTIONS)):
            if given:
                raise UsageError(f"{flag} does not apply with --definitions (definitions "
                                 "run their own clients, timed)")
    measure = request.measure or (Measure.TIMING if request.definitions
                                  else default_measure())
    if measure not in (Measure.TIMING, Measure.INSTRUCTIONS):
        raise UsageError(f"--measure {measure}: bisect measures timing or instructions")
    runs = request.runs if request.runs is not None else DEFAULT_RUNS[measure]
    budget = request.max_runs if request.max_runs is not None else BUDGET_FACTOR * runs
    if runs < 1:
        raise UsageError(f"--runs must be at least 1, got {runs}")
    if budget < runs:
        raise UsageError(f"--max-runs ({budget}) must be at least --runs ({runs})")
    effect = request.min_effect
    if effect is None and measure == Measure.INSTRUCTIONS:
        effect = INSTRUCTION_MIN_EFFECT
    return replace(request, measure=measure, runs=runs, max_runs=budget,
                   metric=check_metric(request.metric, measure), min_effect=effect)
