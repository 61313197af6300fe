"""``kvperf run --rate-sweep`` (or a config's ``rate_sweep``) as units of work for the one
Runner: per swept series and round, its closed-loop trial (``SaturationWork``: an ordinary
trial whose achieved rps places the ladder), then one open-loop trial per step of the
ladder (``PointWork``, plan/sweep.py), each on a fresh server like every trial, its row
persisted as it finishes. Series of the config without a sweep run as usual.

A point whose saturation trial failed fails too (it has no rate), with the reason; the
closed-loop trial of the next round places that round's ladder afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from kvperf.config.rate_sweep import RateSweep
from kvperf.core.errors import DriverError, UsageError
from kvperf.core.kinds import Measure, Mode
from kvperf.pipeline.run import quick
from kvperf.pipeline.run.model import Bench, Prepared
from kvperf.pipeline.run.trial_run import Matrix, MatrixTrial
from kvperf.plan.sweep import (
    CONFIG_SET_KEY,
    Step,
    duration_text,
    ladder,
    point_id,
    point_trial,
    sweep_seconds,
    trial_seconds,
)
from kvperf.plan.trial import Trial
from kvperf.results.row import Row, TrialOutcome, build_row, client_record, trial_series
from kvperf.results.sweep import POINT, SATURATION, SweepRecord

TOOL = "kvload"  # the open loop with intended-time latency is kvload's (--rps)
MIN_POINT_REQUESTS = 100  # a point expected to send fewer fails: no distribution to read


def sweep_of(prepared: Prepared, trial: Trial) -> RateSweep | None:
    """The sweep a trial's series runs: --rate-sweep's, else its config object's."""
    if prepared.options.rate_sweep is not None:
        return prepared.options.rate_sweep
    spec = next((s for s in prepared.specs if s.index == trial.spec_index), None)
    return spec.rate_sweep if spec else None


def shortened(sweep: RateSweep, forced: bool) -> RateSweep:
    """Quick mode: points of quick.SECONDS."""
    if not quick.enabled(forced):
        return sweep
    return replace(sweep, point_seconds=min(sweep.point_seconds, quick.SECONDS))


def check(prepared: Prepared) -> None:
    """A sweep needs kvload's open loop and timing (UsageError, exit 2, before any server);
    a client harness's sweep, fixed rates (its open loop: the spec's ``rate``)."""
    swept = [s for t in prepared.trials if (s := sweep_of(prepared, t))]
    if not swept:
        return
    options = prepared.options
    if (prepared.subjects or options.clients) and any(s.rates is None for s in swept):
        raise UsageError("a client harness's rate sweep runs at fixed rates: give them "
                         "(--rates 2000,5000 or the config's \"rate_sweep\": {\"rates\": "
                         "[…]}); percents of a saturation are kvload's alone")
    if prepared.driver.name != TOOL:
        raise UsageError(f"--rate-sweep needs kvload's open loop with intended-time latency "
                         f"(--tool kvload): {prepared.driver.name} {prepared.driver.version} "
                         "cannot run one")
    if options.measure != Measure.TIMING:
        raise UsageError(f"--rate-sweep measures latency: not with --measure "
                         f"{options.measure}")
    if options.mode == Mode.SERVER:
        raise UsageError("--rate-sweep drives load: not with --mode server")


@dataclass
class Saturation:
    """What a series' closed-loop trial measured for its round's ladder."""

    rps: float | None = None
    failure: str | None = None


def _record(base: Trial, sweep: RateSweep, role: str, steps: int) -> SweepRecord:
    return SweepRecord(id=base.id, role=role, points=steps, arrivals=sweep.arrivals,
                       point_seconds=sweep.point_seconds,
                       rule={"slo": sweep.slo.text() if sweep.slo else None,
                             "factor": sweep.factor})


@dataclass(frozen=True)
class SaturationWork(MatrixTrial):
    """A swept series' closed-loop trial: an ordinary trial of its series (its row as
    ``run`` writes it, plus the ``sweep`` object); its rps places the round's ladder."""

    sweep: RateSweep = field(default_factory=RateSweep)
    saturation: Saturation = field(default_factory=lambda: Saturation())
    steps: int = 0

    def describe(self) -> str:
        seconds = sweep_seconds(self.trial, self.sweep)
        return (f"{super().describe()} · closed loop (saturation), then "
                f"{self.steps} rate points · sweep ≈ {duration_text(seconds)}")

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        measured = outcome.measurement
        self.saturation.rps = measured.rps if outcome.ok and measured else None
        self.saturation.failure = None if self.saturation.rps else (outcome.error
                                                                    or "measured nothing")
        row = super().row(outcome, timestamp)
        row["sweep"] = _record(self.trial, self.sweep, SATURATION, self.steps)
        return row


@dataclass
class Placement:
    """The rate a point was placed at when it ran (None: not yet, or no saturation)."""

    target: float | None = None


@dataclass(frozen=True)
class PointWork(MatrixTrial):
    """One open-loop point of a swept series (``trial``: the series' closed-loop trial):
    the series' load at the step's rate (placed when it runs, from the round's saturation),
    a series of its own (``config_set.rate``)."""

    sweep: RateSweep = field(default_factory=RateSweep)
    step: Step = field(default_factory=lambda: Step(0))
    steps: int = 0
    saturation: Saturation = field(default_factory=lambda: Saturation())
    placed: Placement = field(default_factory=lambda: Placement())

    @property
    def target(self) -> float | None:
        return self.placed.target

    @property
    def identity(self) -> str:
        return point_id(self.trial, self.step)

    @property
    def name(self) -> str:
        return f"trial {self.trial.index} at {self.step.label}"

    def describe(self) -> str:
        rate = f" = {self.target:,.0f} rps" if self.target else ""
        left = (self.steps - self.step.index) * trial_seconds(self._trial(1.0))
        return (f"{self.trial.describe()} · rate {self.step.label}{rate} · point "
                f"{self.step.index + 1}/{self.steps}, sweep ≈ {duration_text(left)} left")

    @property
    def log_dir(self) -> Path:
        base = self.trial
        return (self.prepared.out_dir / "trials" /
                f"{base.index:04d}-{self.identity}-r{base.run}-rate{self.step.index:02d}")

    def _trial(self, target: float) -> Trial:
        return point_trial(self.trial, self.step, target, self.sweep)

    def point_trial(self) -> Trial:
        """Its open-loop trial (at the placed rate, or 1 rps before it ran: for estimates)."""
        return self._trial(self.target or 1.0)

    def execute(self, bench: Bench) -> None:
        target = self.placed.target = self.step.target(self.saturation.rps)
        if target is None:
            raise DriverError(f"no rate for {self.step.label}: the series' closed-loop trial "
                              f"failed ({self.saturation.failure or 'not run'})")
        expected = target * self.sweep.point_seconds
        if expected < MIN_POINT_REQUESTS:
            raise DriverError(
                f"{self.step.label} = {target:,.1f} rps × {self.sweep.point_seconds} s is "
                f"{expected:,.0f} requests, too few to measure a latency distribution (the "
                f"closed-loop trial measured {self.saturation.rps or 0:,.1f} rps: a stalled "
                "server? rerun, or --retry-disturbed)")
        MatrixTrial(self.prepared, self._trial(target)).execute(bench)

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        series = trial_series(self._trial(self.target or 0.0))
        series["config_set"] = {**(series["config_set"] or {}),
                                CONFIG_SET_KEY: self.step.label}
        series["trial_id"] = self.identity
        _per_call(outcome)
        row = build_row(series, self.prepared.context, outcome, timestamp,
                        {"client": client_record(outcome.measurement)})
        record = _record(self.trial, self.sweep, POINT, self.steps)
        record["index"], record["point"] = self.step.index, self.step.label
        record["percent"], record["target_rps"] = self.step.percent, self.target
        record["saturation_rps"] = self.saturation.rps
        row["sweep"] = record
        return row


def _per_call(outcome: TrialOutcome) -> None:
    """The server's CPU per request of a point over the calls it executed: its CPU seconds
    include the settle inside the measured run, which the tool's request count leaves out."""
    server = outcome.server
    calls, cpu = server.get("calls"), server.get("cpu_seconds")
    if calls and cpu is not None:
        server["cpu_us_per_request"] = round(cpu / calls * 1e6, 4)


@dataclass
class SweepBatch(Matrix):
    """The config matrix with its swept series expanded (a Batch of the Runner)."""

    _works: list[MatrixTrial] | None = field(default=None, init=False)

    def works(self) -> list[MatrixTrial]:
        if self._works is None:
            self._works = [w for t in self.prepared.trials for w in self.expand(t)]
        return self._works

    def expand(self, trial: Trial) -> list[MatrixTrial]:
        """The trial's works: itself, or its sweep (closed loop, then every point)."""
        sweep = sweep_of(self.prepared, trial)
        if sweep is None:
            return [MatrixTrial(self.prepared, trial)]
        sweep = shortened(sweep, self.prepared.options.quick)
        steps = ladder(sweep)
        saturation = Saturation()
        return [SaturationWork(self.prepared, trial, sweep, saturation, len(steps)),
                *(PointWork(self.prepared, trial, sweep, step, len(steps), saturation)
                  for step in steps)]


def sweeping(prepared: Prepared) -> bool:
    return any(sweep_of(prepared, t) for t in prepared.trials)


def ordinary(rows: list[Row]) -> list[Row]:
    """The rows but a sweep's open-loop points: what gates judge (a point's rps is its
    target's, not a capacity; its latency bound is --slo's)."""
    return [r for r in rows if (r.get("sweep") or {}).get("role") != POINT]
