"""redisbench-admin KPIs: bounds on result values, checked after each test (pure).

A definition's ``kpis`` is a list of one-key maps, mode → {JSONPath: bound}::

    kpis:
      - le: { $.Tests.Overall.p50_latency_ms: 0.5 }
      - ge: { $.Tests.Overall.rps: 100000 }

Modes as redisbench-admin's ``validate_result_expectations`` (utils/remote.py) compares
``actual <mode> bound`` with both sides as floats: ``eq``, ``le``, ``ge``; kvperf adds
``lt`` and ``gt``. One difference, on purpose: redisbench-admin passes a KPI whose path finds
nothing; kvperf fails it ("no value"), since a check that measured nothing is not a pass.
The first value a path finds is the one compared, as there.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvperf.definitions.jsonpath import JsonPathError, find

COMPARISONS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "eq": ("==", operator.eq),
    "le": ("<=", operator.le),
    "ge": (">=", operator.ge),
    "lt": ("<", operator.lt),
    "gt": (">", operator.gt),
}


@dataclass(frozen=True)
class Kpi:
    """One bound: ``value at path <mode> bound``."""

    mode: str
    path: str
    bound: float

    def describe(self) -> str:
        return f"{self.path} {COMPARISONS[self.mode][0]} {self.bound:g}"


@dataclass(frozen=True)
class KpiResult:
    kpi: Kpi
    value: float | None
    passed: bool
    reason: str = ""  # why it failed without a comparison (no value, not a number)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def check(kpi: Kpi, document: Any) -> KpiResult:
    """``kpi`` checked against a result document."""
    try:
        found = find(kpi.path, document)
    except JsonPathError as exc:
        return KpiResult(kpi, None, False, f"bad path: {exc}")
    if not found:
        return KpiResult(kpi, None, False, "no value at this path")
    value = _number(found[0].value)
    if value is None:
        return KpiResult(kpi, None, False, f"not a number: {found[0].value!r}")
    return KpiResult(kpi, value, COMPARISONS[kpi.mode][1](value, kpi.bound))


def check_all(kpis: tuple[Kpi, ...], document: Any) -> tuple[KpiResult, ...]:
    return tuple(check(kpi, document) for kpi in kpis)


def all_passed(results: tuple[KpiResult, ...]) -> bool:
    return all(result.passed for result in results)
