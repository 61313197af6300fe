"""A rate sweep's settings (``kvperf run --rate-sweep``, or a config object's ``rate_sweep``):
which open-loop rates to run, how long each point measures, and the knee rule's bound.

Pure: every mistake is a ValueError naming the setting; the request (flags) and the config
loader (key ``rate_sweep``) turn it into exit 2 with the flag or the key named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypedDict

# Percent of the closed-loop saturation rps: coarse at the bottom, finer near the top,
# where latency turns.
DEFAULT_PERCENTS = (10, 30, 50, 60, 70, 80, 85, 90, 95, 100)
DEFAULT_POINT_SECONDS = 5
DEFAULT_FACTOR = 2.0
ARRIVALS = ("poisson", "uniform")
SLO_METRICS = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99.9": 99.9}
_SLO = re.compile(r"^\s*(p50|p90|p99|p99\.9)\s*(<=|<)\s*([0-9]*\.?[0-9]+)\s*(us|µs|ms|s)\s*$")
_UNIT_MS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}


@dataclass(frozen=True)
class Slo:
    """A latency bound on the corrected (intended-time) latency: ``p99<=1ms``."""

    metric: str  # p50, p90, p99, p99.9
    bound_ms: float
    strict: bool = False  # "<" rather than "<="

    def holds(self, value_ms: float) -> bool:
        return value_ms < self.bound_ms if self.strict else value_ms <= self.bound_ms

    def text(self) -> str:
        return f"{self.metric}{'<' if self.strict else '<='}{self.bound_ms:g}ms"


def parse_slo(text: str) -> Slo:
    """``p99<=1ms``, ``p99.9<2.5ms``, ``p50<=300us`` → Slo (ValueError otherwise)."""
    found = _SLO.match(text)
    if not found:
        raise ValueError(f"{text!r} is not a latency bound like \"p99<=1ms\" (percentile "
                         f"{', '.join(SLO_METRICS)}; operator <= or <; unit us, ms or s)")
    metric, op, value, unit = found.groups()
    bound = float(value) * _UNIT_MS[unit]
    if bound <= 0:
        raise ValueError(f"{text!r}: the bound must be positive")
    return Slo(metric, bound, op == "<")


class KneeRule(TypedDict):
    """The knee rule as a sweep's rows record it (results/sweep.py's ``rule``)."""

    slo: str | None  # "p99<=1ms" (corrected latency), or None: the growth factor
    factor: float


@dataclass(frozen=True)
class RateSweep:
    """What a sweep runs per series: ``percents`` of the closed-loop saturation rps, or
    explicit ``rates`` (requests/s; no saturation needed to place them, but it is measured
    all the same), each an open-loop trial of ``point_seconds``; the knee rule's ``slo``
    (None: the growth ``factor`` over the low-rate baseline, analysis/knee.py)."""

    percents: tuple[float, ...] = DEFAULT_PERCENTS
    rates: tuple[float, ...] | None = None
    point_seconds: int = DEFAULT_POINT_SECONDS
    slo: Slo | None = None
    factor: float = DEFAULT_FACTOR
    arrivals: str = "poisson"

    def rule(self) -> KneeRule:
        """What the rows record of the knee rule (so readers judge with the same one)."""
        return {"slo": self.slo.text() if self.slo else None, "factor": self.factor}


def parse_numbers(text: str, what: str) -> tuple[float, ...]:
    """A comma-separated list of positive numbers (``10000,50000`` or ``10,50,90``);
    ``k``/``M`` suffixes allowed (``50k``)."""
    values = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        scale = {"k": 1e3, "M": 1e6}.get(part[-1], 1.0)
        number = part[:-1] if scale != 1.0 else part
        try:
            value = float(number) * scale
        except ValueError:
            raise ValueError(f"{what}: {part!r} is not a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise ValueError(f"{what}: every value must be a positive number, got {part!r}")
        values.append(value)
    if not values:
        raise ValueError(f"{what}: give at least one value")
    return tuple(sorted(set(values)))


def check_percents(percents: tuple[float, ...], what: str) -> tuple[float, ...]:
    over = [p for p in percents if p > 150]
    if over:
        raise ValueError(f"{what}: {over[0]:g}% is beyond 150% of saturation (give percent "
                         "values such as 10,50,90)")
    return percents


def check_point_seconds(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive whole number of seconds, got {value!r}")
    return value


def check_factor(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 1:
        raise ValueError(f"{what} must be a number above 1 (p99 growth over the low-rate "
                         f"baseline), got {value!r}")
    return float(value)


def check_arrivals(value: Any, what: str) -> str:
    if value not in ARRIVALS:
        raise ValueError(f"{what} must be one of {', '.join(ARRIVALS)}, got {value!r}")
    return str(value)


_CONFIG_KEYS = ("percents", "rates", "point_seconds", "slo", "factor", "arrivals")


def from_config(key: str, value: Any) -> RateSweep | None:
    """The config key ``rate_sweep``: ``true`` (the defaults), ``false`` (none) or an
    object of
    ``percents`` / ``rates`` (lists or comma strings), ``point_seconds``, ``slo``,
    ``factor``, ``arrivals``."""
    if value is True:
        return RateSweep()
    if value is False:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be true or an object with keys "
                         f"{', '.join(_CONFIG_KEYS)}")
    unknown = sorted(set(value) - set(_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"{key!r} has unknown key {unknown[0]!r}; known keys: "
                         f"{', '.join(_CONFIG_KEYS)}")
    if "percents" in value and "rates" in value:
        raise ValueError(f"{key!r}: give 'percents' or 'rates', not both")

    def numbers(name: str) -> tuple[float, ...]:
        raw = value[name]
        text = ",".join(map(str, raw)) if isinstance(raw, list) else str(raw)
        return parse_numbers(text, f"{key}.{name}")

    sweep = RateSweep()
    try:
        slo = parse_slo(str(value["slo"])) if value.get("slo") is not None else None
    except ValueError as exc:
        raise ValueError(f"{key}.slo: {exc}") from None
    return RateSweep(
        percents=(check_percents(numbers("percents"), f"{key}.percents")
                  if "percents" in value else sweep.percents),
        rates=numbers("rates") if "rates" in value else None,
        point_seconds=check_point_seconds(value.get("point_seconds", sweep.point_seconds),
                                          f"{key}.point_seconds"),
        slo=slo,
        factor=check_factor(value.get("factor", sweep.factor), f"{key}.factor"),
        arrivals=check_arrivals(value.get("arrivals", sweep.arrivals), f"{key}.arrivals"))
