"""Duet rounds: every side runs the same trial at the same time, on the same CPUs.

On these shared VMs the machine's speed wanders by ±25% within seconds, so even A and B
trials run back to back see different machines (paired log-ratio SD 16–28% measured here).
Run side by side — both servers pinned to the same cores, one load tool each — both
sides see the same machine at every instant and the ratio B/A keeps only the code's
difference (paired SD ≈ 0.7% measured; docs/PERFORMANCE.md). This is "duet benchmarking"
(Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", 2020).

The sides meet at two barriers — before the warmup and before the measure stage — so
their measure stages overlap; measure stages are duration-bound, so they also end
together. A side that fails before a barrier breaks it: its partners fail too (their
measurement would be of a machine they had to themselves). Absolute values are those of a
shared core: compare ratios, not values across schedules.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from kvperf.core.errors import DriverError, Interrupted, UsageError
from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline.run.model import TrialExecutor, Work
from kvperf.plan.trial import Trial
from kvperf.results.row import Row, is_ok, mark_failed

SCHEDULES = tuple(Schedule)
DUET_DEFAULT_SECONDS = 3  # measure stage of the built-in config under --schedule duet
BARRIER_TIMEOUT = 1800.0  # seconds a side waits for its partners (seeding can be long)
_POLL = 0.2


def check_duet(trials: Sequence[Trial], measure: Measure, sides: int) -> None:
    """Exit 2 (before any build or server) when the plan cannot run as a duet."""
    if sides < 2:
        raise UsageError("--schedule duet needs at least two sides")
    if measure != Measure.TIMING:
        raise UsageError(f"--schedule duet is for timing measurements; --measure {measure} "
                         "counts per process and needs no duet")
    for trial in trials:
        if trial.load.duration is None:
            raise UsageError(
                f"--schedule duet: config object {trial.spec_index} bounds its measure stage "
                f"by 'requests' ({trial.load.requests}); the sides must stop together, so "
                "give 'duration' (seconds) instead")


def _meet(barrier: threading.Barrier, stage: str) -> None:
    try:
        barrier.wait(timeout=BARRIER_TIMEOUT)
    except threading.BrokenBarrierError:
        raise DriverError(f"duet: a partner side failed or timed out before the {stage} "
                          "stage, so this side ran alone") from None


def run_duet_round(runners: Mapping[str, TrialExecutor], works: Mapping[str, Work],
                   order: Sequence[str], started: Callable[[str], None]) -> dict[str, Row]:
    """Run each side's work (the same trial) at once (threads started in ``order``); rows
    by side.

    Blocked sides (no server to run) record their failed row without taking part.
    """
    live = [s for s in order if not runners[s].blocked]
    barrier = threading.Barrier(max(len(live), 1))
    rows: dict[str, Row] = {}

    def work(side: str) -> None:
        try:
            rows[side] = runners[side].run_trial(works[side],
                                                 sync=lambda stage: _meet(barrier, stage))
        finally:
            if side not in rows or not is_ok(rows[side]):
                barrier.abort()

    threads = {side: threading.Thread(target=work, args=(side,), name=f"duet-{side}",
                                      daemon=True) for side in live}
    for side in order:
        started(side)
        if side in threads:
            threads[side].start()
        else:
            rows[side] = runners[side].run_trial(works[side])
    try:
        for thread in threads.values():
            while thread.is_alive():
                thread.join(_POLL)
    except (KeyboardInterrupt, Interrupted):
        barrier.abort()  # partners waiting at a barrier stop; measure stages end on time
        for thread in threads.values():
            thread.join()
        raise Interrupted("interrupted") from None
    missing = [s for s in live if s not in rows]
    if missing:  # a thread died of an unexpected exception: it was already reported
        raise DriverError(f"duet: side(s) {', '.join(missing)} ended without a result")
    _fail_partners(rows, live)
    return rows


def _fail_partners(rows: dict[str, Row], live: list[str]) -> None:
    """A side's row is a duet measurement only if every partner ran its trial too."""
    failed = [s for s in live if not is_ok(rows[s])]
    if not failed:
        return
    first = failed[0]
    reason = str(rows[first].get("error") or "failed").splitlines()[0]
    for side in live:
        mark_failed(rows[side], f"duet partner {first} failed in this round: {reason}")
