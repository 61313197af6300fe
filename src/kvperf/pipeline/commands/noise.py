"""`kvperf compare` and `kvperf noise`: interleaved sides, checked whole before any build —
the sides (refs or binaries), the flags that exclude each other, --min-effect and
--water-line, the runs, the schedule, the plan every side will run, --server-host, the
store — so a bad flag never costs a build."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.noise import NoiseRow, noise_rows
from kvperf.analysis.sequential import SeriesStop, rounds_run
from kvperf.analysis.verdict import DEFAULT_RULE
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.pipeline.commands.checks import (
    auto_runs,
    build_request,
    checked_runs,
    default_runs,
    fixed_runs,
    loaded,
    remote_request,
    store_request,
)
from kvperf.pipeline.commands.outputs import auto_stops, auto_verdicts
from kvperf.pipeline.request.sides import NOISE_RUNS, NoiseFlags, NoiseRequest, SidesRequest
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import SidesHooks
from kvperf.pipeline.sides.interleaved import noise as run_noise
from kvperf.pipeline.sides.sides import check_schedule, plan_sides
from kvperf.pipeline.world import World


def noise_request(flags: NoiseFlags) -> NoiseRequest:
    """Every check of `kvperf noise` (UsageError, exit 2) before any build or server."""
    if flags.commit and flags.server_bin:
        raise UsageError("give --commit or --server-bin, not both")
    specs = loaded(flags.config)
    check_schedule(flags.config, Measure.TIMING, flags.schedule, 2, specs)
    auto = auto_runs(flags.runs, flags.max_runs)
    runs = checked_runs(auto.design.max_rounds if auto else
                        default_runs(fixed_runs(flags.runs), Measure.TIMING, NOISE_RUNS))
    sides = SidesRequest("noise", runs, flags.config, flags.tool, flags.store.results_dir,
                         flags.label, flags.seed, Measure.TIMING, flags.schedule,
                         specs=specs, auto=auto)
    build = build_request(flags.build) if flags.commit else None
    plan = plan_sides(sides)
    remote = remote_request(flags.remote, plan.options, 2, lambda: plan.trials)
    return NoiseRequest(sides, store_request(flags.store, live=True), flags.server_bin,
                        flags.commit, build, remote)


@dataclass
class NoiseMeasured:
    """An A/A run's noise per metric (``rows``: report/noise.py's table) under its title."""

    rows: list[NoiseRow]
    title: str
    result: SidesResult
    stops: list[SeriesStop] = field(default_factory=list)  # --runs auto

    def check_store(self) -> None:
        """StoreError (exit 1) if some finished trials did not reach the database."""
        self.result.check_store()


def noise(request: NoiseRequest, world: World, hooks: SidesHooks) -> NoiseMeasured:
    """One server run against itself, interleaved; its CV and the runs a verdict needs."""
    result, plan = run_noise(request, world, hooks)
    a = plan.sides["A"]
    auto = request.sides.auto
    rounds = rounds_run(result.a_rows + result.b_rows)
    title = (f"A/A noise · {a.context.server_version} · {a.driver.name} · "
             f"{rounds if auto else request.sides.runs} rounds")
    judged = (auto_verdicts(result, auto, auto.rule, "all") if auto
              else compare_paired(result.a_rows, result.b_rows, "all", DEFAULT_RULE))
    found = NoiseMeasured(noise_rows(judged), title, result)
    if auto:
        found.stops = auto_stops(result, judged, auto, plan.out_dir,
                                 [p.out_dir for p in plan.sides.values()])
    return found
