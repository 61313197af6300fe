"""A rate sweep's plan (pure): the ladder of open-loop points, each point's trial once the
saturation rps is known, its identity, and how long a sweep takes.

A swept series runs as: its ordinary trial (the closed loop: the saturation rps), then one
open-loop trial per step of the ladder — a percent of that rps, or an explicit rate — each
``point_seconds`` long (after the series' warmup, at the same rate, and SETTLE_SECONDS of
load inside the measured run). A point's identity is
the series' and its step's (``60%``, ``50000/s``), never the resolved rate: the same point
on two sides, or in two rounds, pairs even though their saturation differs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kvperf.config.commands import Seed
from kvperf.config.rate_sweep import RateSweep
from kvperf.core.identity import stable_id
from kvperf.plan.trial import Trial

# What a trial costs beyond its warmup and measure stage (server start, connections, kvload's
# start and report, the probes), and seeding speed: estimates for the progress line.
TRIAL_OVERHEAD_SECONDS = 1.0
SEED_KEYS_PER_SECOND = 250_000
REQUESTS_PER_SECOND = 100_000  # a request-bound trial's guess (closed loop, P=1)
CONFIG_SET_KEY = "rate"  # the point's step in the row's config_set: one series per point
# Seconds an open-loop point runs inside its measured kvload run before it counts: a fresh
# run's first sends go out late (connections, the first wakeups), ~3% of a 1 s point's.
SETTLE_SECONDS = 0.5


@dataclass(frozen=True)
class Step:
    """One point of the ladder: ``percent`` of the saturation rps, or a fixed ``rate``."""

    index: int
    percent: float | None = None
    rate: float | None = None

    @property
    def label(self) -> str:
        if self.rate is not None:  # whole rates in digits: 2000000/s, not 2e+06/s
            return f"{self.rate:.0f}/s" if self.rate.is_integer() else f"{self.rate:g}/s"
        return f"{self.percent:g}%"

    def target(self, saturation: float | None) -> float | None:
        """Requests/s this point sends (None: a percent with no saturation measured)."""
        if self.rate is not None:
            return self.rate
        if saturation is None or self.percent is None:
            return None
        return saturation * self.percent / 100.0


def ladder(sweep: RateSweep) -> tuple[Step, ...]:
    """The sweep's points, lowest rate first."""
    if sweep.rates is not None:
        return tuple(Step(i, rate=r) for i, r in enumerate(sorted(sweep.rates)))
    return tuple(Step(i, percent=p) for i, p in enumerate(sorted(sweep.percents)))


def point_id(base: Trial, step: Step) -> str:
    """A point's trial id: its series' parameters and its step (not its run or rate)."""
    return stable_id({**base.params(), "rate_point": step.label})


def point_trial(base: Trial, step: Step, target: float, sweep: RateSweep) -> Trial:
    """The open-loop trial of one point: the series' load at ``target`` rps for
    ``point_seconds``, the series' warmup before it (at the same rate)."""
    load = replace(base.load, rps=target, arrivals=sweep.arrivals, requests=None,
                   duration=sweep.point_seconds, settle=SETTLE_SECONDS)
    return replace(base, load=load)


def trial_seconds(trial: Trial) -> float:
    """A guess of one trial's wall time: warmup, measure stage, seeding and overhead."""
    load = trial.load
    measure = (load.duration if load.duration is not None
               else (load.requests or 0) / REQUESTS_PER_SECOND)
    seeding = (load.keyspacelen / SEED_KEYS_PER_SECOND
               if load.command.seed is not Seed.NONE else 0.0)
    return load.warmup + load.settle + measure + seeding + TRIAL_OVERHEAD_SECONDS


def sweep_seconds(base: Trial, sweep: RateSweep) -> float:
    """A guess of one swept series' wall time: the closed-loop trial and every point."""
    steps = ladder(sweep)
    point = point_trial(base, steps[0], 1.0, sweep)
    return trial_seconds(base) + len(steps) * trial_seconds(point)


def duration_text(seconds: float) -> str:
    """``45 s``, ``1 min 50 s``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"
