"""The interleaved-sides workflow behind `compare`, `noise` and `run --commits`: a typed
request → every side prepared (all input checks first, exit 2 before any server) → the sides
run interleaved (pipeline/sides/ab.py), each row persisted as it finishes.

The CLI maps argv to a SidesRequest, passes its progress reporter and the open store, and
renders the result; nothing here reads argparse or prints."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.analysis.sequential import Looks, series_of
from kvperf.config.model import BenchmarkSpec
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline.request.options import RunOptions
from kvperf.pipeline.request.sides import AutoRuns, SidesRequest
from kvperf.pipeline.run.duet import check_duet
from kvperf.pipeline.run.model import Observer, Prepared
from kvperf.pipeline.run.prepare import load_specs, prepare
from kvperf.pipeline.sides.ab import RoundCheck, SidesResult, Skip, interleave_sides
from kvperf.pipeline.world import Launcher
from kvperf.plan.matrix import expand
from kvperf.sourcebuild.builder import Build
from kvperf.store.writer import TrialWriter


@dataclass(frozen=True)
class Side:
    """One side of an interleaved run: a server binary, or why it has none."""

    name: str
    server_bin: str | None = None
    commit: str | None = None
    blocked: str | None = None
    provenance: tuple[tuple[str, str], ...] = ()
    label: str | None = None  # what readers call it (a ref); None: from the binary
    client: str | None = None  # compare --client: this side's client (NAME[:MODEL])


def build_provenance(build: Build) -> tuple[tuple[str, str], ...]:
    """What the rows' env records about a side's build (ref, sha, log, commit facts)."""
    facts = {"ref": build.ref, "commit_sha": build.sha or "",
             "build_log": str(build.log or ""), "build_cached": str(build.cached)}
    if build.info:
        facts |= {"commit_date": build.info.committed_at.isoformat(),
                  "commit_subject": build.info.subject}
    return tuple(facts.items())


def side_from_build(name: str, build: Build) -> Side:
    """A built ref as a side; a failed build is a blocked side (its trials fail, the rest
    run)."""
    return Side(name, str(build.server_bin) if build.server_bin else None, build.sha,
                None if build.ok else build.error or "build failed", build_provenance(build),
                build.ref)


PLANNING = "planning"  # the plan's side (plan_sides): checks every client, runs nothing


def side_name(index: int) -> str:
    """A, B, … Z, then S27, S28 …: the sides' directory names."""
    return chr(ord("A") + index) if index < 26 else f"S{index + 1}"


def ref_side_name(ref: str, sha: str | None, taken: set[str]) -> str:
    """A directory-safe, unique name for a ref's results (the ref itself is data)."""
    safe = re.sub(r"[^\w.+-]", "_", ref).strip(".") or "ref"
    name = safe if safe == ref or sha is None else f"{safe}-{sha[:8]}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def check_schedule(config: Path | None, measure: Measure, schedule: Schedule,
                   sides: int, specs: tuple[BenchmarkSpec, ...] | None = None) -> None:
    """Refuse a plan that cannot run under the schedule before anything is built (exit 2);
    ``specs``: the config as the command loaded it (None: loaded here)."""
    if schedule != Schedule.DUET:
        return
    options = RunOptions(config=config, measure=measure, schedule=Schedule.DUET, specs=specs)
    check_duet(expand(load_specs(options), 1), options.measure, sides)


def plan_sides(request: SidesRequest) -> Prepared:
    """The plan every side will run, checked as a side would check it — config, tool,
    measure, profile — before anything is built (exit 2); no server binary is resolved."""
    return prepare(side_options(request, Side("plan", blocked=PLANNING),
                                request.results_dir))


def side_options(request: SidesRequest, side: Side, base: Path) -> RunOptions:
    clients = ((side.client,) if side.client
               else request.clients if side.blocked == PLANNING else ())
    return RunOptions(config=request.config, results_dir=base, label=side.name,
                      runs=request.runs, server_bin=side.server_bin, tool=request.tool,
                      commit=side.commit, blocked=side.blocked, provenance=side.provenance,
                      measure=request.measure, schedule=request.schedule,
                      revision_from_binary=True, profile=request.profile, keys=request.keys,
                      clients=clients, clients_dirs=request.clients_dirs,
                      client_repos=request.client_repos,
                      concurrency=request.concurrency, client_side=bool(clients),
                      rate_sweep=request.rate_sweep, specs=request.specs)


@dataclass(frozen=True)
class PreparedSides:
    """Every side checked and planned, and the side order's seed (drawn if not given)."""

    request: SidesRequest
    sides: dict[str, Prepared]
    seed: int
    labels: dict[str, str] = field(default_factory=dict)  # side → readable label

    @property
    def trials(self) -> int:
        return sum(len(p.trials) for p in self.sides.values())

    @property
    def out_dir(self) -> Path:
        """The directory the sides' directories are in (as prepared: a default label's
        timestamp is not drawn again)."""
        return next(iter(self.sides.values())).out_dir.parent


def prepare_sides(request: SidesRequest, sides: list[Side]) -> PreparedSides:
    """All input checks of every side (UsageError, exit 2) before any server starts."""
    if request.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {request.runs}")
    base = request.out_dir
    prepared = {s.name: prepare(side_options(request, s, base)) for s in sides}
    seed = request.seed if request.seed is not None else secrets.randbelow(2**31)
    return PreparedSides(request, prepared, seed, side_labels(sides, prepared))


def side_labels(sides: list[Side], prepared: dict[str, Prepared]) -> dict[str, str]:
    """Each side's readable label (its ref, else the binary's ``valkey 8.0.1``, else its
    name); a label taken twice (an A/A run) gets `` #2`` …"""
    labels: dict[str, str] = {}
    for side in sides:
        binary = prepared[side.name].binary
        label = side.label or (binary.display_name if binary else side.name)
        taken = sum(1 for x in labels.values() if x == label or x.startswith(f"{label} #"))
        labels[side.name] = f"{label} #{taken + 1}" if taken else label
    return labels


def run_sides(plan: PreparedSides, observer: Observer, store: TrialWriter | None,
              launcher: Launcher | None = None) -> SidesResult:
    """Run every side's trials interleaved under the request's schedule; with
    ``--runs auto``, round by round, each series until the sequential rule stops it
    (``analysis.sequential.Looks``: a stopped series' trials are not run again), the looks
    kept in the result."""
    auto = plan.request.auto
    looks = Looks(auto.design) if auto is not None else None
    stop, skip = auto_checks(auto, looks)
    result = interleave_sides(plan.sides, plan.seed, observer, store, plan.request.schedule,
                              plan.labels, launcher, plan.request.interference, stop, skip)
    result.looks = looks
    return result


def auto_checks(auto: AutoRuns | None, looks: Looks | None
                ) -> tuple[RoundCheck | None, Skip | None]:
    """``--runs auto``'s check after each round (A's and B's rows judged by the sequential
    rule, ``Looks.look``) and its skip (a row's series stopped); None, None for a fixed
    number of runs."""
    if auto is None or looks is None:
        return None, None
    return (lambda result, rounds: looks.look(result.a_rows, result.b_rows, rounds, auto.rule,
                                              auto.metrics),
            lambda row: not looks.open(series_of(row)))


def default_schedule(config: Path | None, measure: Measure, tool: str | None,
                     profiled: bool, sides: int,
                     specs: tuple[BenchmarkSpec, ...] | None = None) -> Schedule:
    """Duet where the plan allows it — timing, duration-bound trials, kvload (the tool that
    stops on time), no profiler — else alternate (docs: why duet by default)."""
    if measure != Measure.TIMING or profiled or tool not in (None, "kvload") or sides < 2:
        return Schedule.ALTERNATE
    try:
        check_schedule(config, measure, Schedule.DUET, sides, specs)
    except UsageError:
        return Schedule.ALTERNATE
    return Schedule.DUET
