"""``--rate-sweep`` and its flags (``--rates``, ``--rate-steps``, ``--point-seconds``,
``--slo``, ``--knee-factor``, ``--arrivals``) → the checked ``RateSweep`` of a run, or a
UsageError (exit 2) naming the flag, before any server."""

from __future__ import annotations

from dataclasses import dataclass

from kvperf.config.rate_sweep import (
    RateSweep,
    Slo,
    check_arrivals,
    check_factor,
    check_percents,
    check_point_seconds,
    parse_numbers,
    parse_slo,
)
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode


@dataclass(frozen=True)
class RateSweepFlags:
    """The sweep's flags as given."""

    given: bool = False  # --rate-sweep
    rates: str | None = None  # --rates 10000,50000
    steps: str | None = None  # --rate-steps 10,50,90 (percent of saturation)
    point_seconds: int | None = None
    slo: str | None = None
    factor: float | None = None
    arrivals: str | None = None

    def details(self) -> list[str]:
        """The sub-flags given (each needs --rate-sweep)."""
        named = (("--rates", self.rates), ("--rate-steps", self.steps),
                 ("--point-seconds", self.point_seconds), ("--slo", self.slo),
                 ("--knee-factor", self.factor), ("--arrivals", self.arrivals))
        return [flag for flag, value in named if value is not None]


def rate_sweep_request(flags: RateSweepFlags, *, tool: str | None, measure: Measure,
                       mode: Mode, clashes: tuple[tuple[str, bool], ...] = ()
                       ) -> RateSweep | None:
    """The run's sweep (None without --rate-sweep); every refusal names its flag."""
    if not flags.given:
        if flags.details():
            raise UsageError(f"{flags.details()[0]} needs --rate-sweep")
        return None
    if tool is not None and tool != "kvload":
        raise UsageError(f"--rate-sweep needs kvload's open loop (--tool kvload), not "
                         f"--tool {tool}")
    if measure != Measure.TIMING:
        raise UsageError(f"--rate-sweep measures latency over time: not with --measure "
                         f"{measure}")
    if mode == Mode.SERVER:
        raise UsageError("--rate-sweep drives load: not with --mode server")
    for flag, given in clashes:
        if given:
            raise UsageError(f"--rate-sweep does not apply with {flag}")
    if flags.rates is not None and flags.steps is not None:
        raise UsageError("--rates and --rate-steps: give one (explicit rates, or percents "
                         "of the saturation rps)")
    try:
        slo = parse_slo(flags.slo) if flags.slo is not None else None
    except ValueError as exc:
        raise UsageError(f"--slo: {exc}") from None
    try:
        return _sweep(flags, slo)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _sweep(flags: RateSweepFlags, slo: Slo | None) -> RateSweep:
    """The sweep of the flags (ValueError naming the flag)."""
    default = RateSweep()
    percents = (check_percents(parse_numbers(flags.steps, "--rate-steps"), "--rate-steps")
                if flags.steps is not None else default.percents)
    rates = parse_numbers(flags.rates, "--rates") if flags.rates is not None else None
    seconds = (flags.point_seconds if flags.point_seconds is not None
               else default.point_seconds)
    factor = flags.factor if flags.factor is not None else default.factor
    return RateSweep(percents, rates, check_point_seconds(seconds, "--point-seconds"), slo,
                     check_factor(factor, "--knee-factor"),
                     check_arrivals(flags.arrivals or default.arrivals, "--arrivals"))
