"""`kvperf compare` and `kvperf noise`: interleaved sides, checked whole before any build —
the sides (refs or binaries), the flags that exclude each other, --min-effect and
--water-line, the runs, the schedule, the plan every side will run, --server-host, the
store — so a bad flag never costs a build."""

from __future__ import annotations

from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.pipeline.commands.checks import (
    build_request,
    checked_runs,
    default_runs,
    remote_request,
    store_request,
)
from kvperf.pipeline.request.sides import NOISE_RUNS, NoiseFlags, NoiseRequest, SidesRequest
from kvperf.pipeline.sides.sides import check_schedule, plan_sides


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
