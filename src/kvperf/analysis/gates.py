"""KPI gates of a run (pure): ``SERIES.METRIC OP VALUE`` parsed, matched and judged.

A gate bounds one metric of the series it names::

    SET.rps>=100000                 every SET series
    SET P=16.p99_latency_ms<=1      SET series with pipeline 16
    GET.rps>=0.95*baseline          against the same series of a baseline run

SERIES is a command name (``SET``, ``SET:GET 1:10``, ``MULTI_EXEC_5``) followed by optional
``name=value`` parameters as series labels show them (``d`` data size, ``P`` pipeline, ``c``
clients, ``io`` io-threads, or any series field by its row name); every series that matches
must pass. A client library's series (``run --client``, docs/CLIENTS.md) can also be named
by a *label*, a lower-case word: a concurrency model (``pool``), a client (``redis-py``) or
both (``redis-py:pool``); the command is then optional (``pool.rps`` is every pool series).
VALUE may name another series by its label, ``F*LABEL.METRIC``: F times that metric's mean
in the series equal to the gated one but for the label (``pool.rps>=0.8*single.rps``: each
workload's pool rps at least 0.8 of its single rps, the seed's pool overhead bound).
METRIC is a name of the metric catalogue (results/metrics.py). OP is one of
``>= <= > < ==``, the comparisons of definitions' KPIs (definitions/kpis.py), whose table
judges here too. VALUE is a number, ``baseline``, or ``F*baseline``: F times the baseline
run's mean of the same metric in the series with the same label. The observed value is the
metric's mean over the series' timed runs (ok and not profiled); a series without one fails.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kvperf.analysis.comparison import GroupKey, describe_group, group_key
from kvperf.config.commands import ALIASES as COMMAND_ALIASES
from kvperf.config.commands import CATALOGUE
from kvperf.core.errors import UsageError
from kvperf.definitions.kpis import COMPARISONS
from kvperf.results.metrics import BY_NAME
from kvperf.results.row import KEY_FIELDS, Row, is_timed

MODE_OF_OP = {symbol: mode for mode, (symbol, _) in COMPARISONS.items()}
_OP = re.compile(r"(>=|<=|==|>|<)")
_RELATIVE = re.compile(r"^(?:([0-9.eE+-]+)\s*\*\s*)?baseline$", re.IGNORECASE)
# The short parameter names of series labels (analysis/comparison.describe_group).
ALIASES = {"d": "data_size", "P": "pipeline", "c": "clients", "io": "io_threads"}
_FIELD_NAMES = {**{f: f for f in KEY_FIELDS}, **{k.lower(): v for k, v in ALIASES.items()}}


@dataclass(frozen=True)
class Gate:
    """One bound: ``metric of every series matching (command, params) <op> value``."""

    text: str
    command: str
    params: tuple[tuple[str, str], ...]  # row field name → value as written
    metric: str
    mode: str  # a definitions/kpis.py COMPARISONS key
    value: float  # the bound, or the baseline's factor when relative
    relative: bool = False
    labels: tuple[tuple[str, str], ...] = ()  # config_set entries a label names
    against: tuple[tuple[str, str], ...] | None = None  # F*LABEL.METRIC: the other series
    against_metric: str = ""

    @property
    def series(self) -> str:
        short = {v: k for k, v in ALIASES.items()}
        return " ".join([*([self.command] if self.command else []),
                         *(f"{k}={v}" for k, v in self.labels),
                         *(f"{short.get(k, k)}={v}" for k, v in self.params)])

    @property
    def op(self) -> str:
        return COMPARISONS[self.mode][0]


@dataclass(frozen=True)
class GateResult:
    """A gate judged on one series."""

    gate: str
    series: str
    metric: str
    op: str
    observed: float | None
    bound: float | None
    passed: bool
    runs: int
    reason: str = ""  # why it failed without a comparison


def parse_gate(text: str) -> Gate:
    """``SERIES.METRIC OP VALUE`` → Gate; UsageError (exit 2) naming the gate and the part."""
    found = _OP.search(text)
    if found is None:
        raise UsageError(f"gate {text!r}: no comparison; write SERIES.METRIC OP VALUE with OP "
                         f"one of {' '.join(MODE_OF_OP)} (e.g. \"SET.rps>=100000\")")
    left, right = text[:found.start()].strip(), text[found.end():].strip()
    series, metric = _split_metric(text, left)
    command, params, labels = _parse_series(text, series)
    against = _parse_against(text, right)
    if against is not None:
        factor, other, other_metric = against
        return Gate(text, command, params, metric, MODE_OF_OP[found.group(1)], factor,
                    labels=labels, against=other, against_metric=other_metric)
    value, relative = _parse_value(text, right)
    return Gate(text, command, params, metric, MODE_OF_OP[found.group(1)], value, relative,
                labels)


MODELS = ("single", "pool", "async")
_AGAINST = re.compile(r"^(?:([0-9.eE+-]+)\s*\*\s*)?([a-z0-9][a-z0-9._:-]*)\.(\S+)$")


def is_label(token: str) -> bool:
    """A client series' label: a lower-case word that is no command's name."""
    return (token == token.lower() and any(c.isalpha() for c in token)
            and token.upper() not in CATALOGUE and token.upper() not in COMMAND_ALIASES)


def label_params(token: str) -> tuple[tuple[str, str], ...]:
    """``pool`` → concurrency; ``redis-py`` → client; ``redis-py:pool`` → both."""
    name, _, model = token.partition(":")
    if not model and name in MODELS:
        return (("concurrency", name),)
    return (("client", name), *((("concurrency", model),) if model else ()))


def _parse_against(text: str, right: str) -> tuple[float, tuple[tuple[str, str], ...],
                                                   str] | None:
    found = _AGAINST.match(right)
    if found is None or found.group(2) == "baseline" or not is_label(found.group(2)):
        return None
    if found.group(3) not in BY_NAME:
        raise UsageError(f"gate {text!r}: {found.group(3)!r} is not a metric; metrics: "
                         f"{', '.join(BY_NAME)}")
    try:
        factor = float(found.group(1) or 1.0)
    except ValueError:
        raise UsageError(f"gate {text!r}: the factor {found.group(1)!r} is not a "
                         "number") from None
    return factor, label_params(found.group(2)), found.group(3)


def _split_metric(text: str, left: str) -> tuple[str, str]:
    for name in sorted(BY_NAME, key=len, reverse=True):
        if left.endswith("." + name) and left[:-len(name) - 1].strip():
            return left[:-len(name) - 1].strip(), name
    raise UsageError(f"gate {text!r}: {left!r} does not end in .METRIC with a known metric; "
                     f"metrics: {', '.join(BY_NAME)}")


def _parse_series(text: str, series: str) -> tuple[str, tuple[tuple[str, str], ...],
                                                   tuple[tuple[str, str], ...]]:
    words: list[str] = []
    params: list[tuple[str, str]] = []
    labels: tuple[tuple[str, str], ...] = ()
    for token in series.split():
        if "=" not in token and not labels and is_label(token) and (
                not words or token in MODELS or token.partition(":")[2] in MODELS):
            labels = label_params(token)
            continue
        if "=" not in token:
            words.append(token)
            continue
        name, _, value = token.partition("=")
        field = _FIELD_NAMES.get(name.lower(), name)
        if field not in KEY_FIELDS or field == "command" or not value:
            raise UsageError(f"gate {text!r}: unknown series parameter {token!r}; use "
                             f"{', '.join(f'{k}=' for k in ALIASES)} or a series field "
                             f"({', '.join(f for f in KEY_FIELDS if f != 'command')})")
        params.append((field, value))
    if not words and not labels:
        raise UsageError(f"gate {text!r}: the series names no command (e.g. \"SET P=16\")")
    return " ".join(words), tuple(params), labels


def _parse_value(text: str, right: str) -> tuple[float, bool]:
    relative = _RELATIVE.match(right)
    try:
        if relative:
            return float(relative.group(1) or 1.0), True
        value = float(right)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UsageError(f"gate {text!r}: the bound {right!r} is not a number, "
                         "'baseline' or 'F*baseline'")
    return value, False


def parse_gates(texts: Iterable[str]) -> list[Gate]:
    return [parse_gate(text) for text in texts]


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def matches(gate: Gate, key: GroupKey) -> bool:
    """Whether a series (its group key) is one the gate names."""
    fields = dict(key)
    if gate.command and str(fields.get("command", "")).lower() != gate.command.lower():
        return False
    config_set = dict(fields.get("config_set") or ())
    return (all(_text(fields.get(name)).lower() == value.lower()
                for name, value in gate.params)
            and all(str(config_set.get(name, "")).lower() == value.lower()
                    for name, value in gate.labels))


def partner(key: GroupKey, against: tuple[tuple[str, str], ...]) -> GroupKey:
    """The series equal to ``key`` but for the label's config_set entries."""
    out = []
    for name, value in key:
        if name == "config_set":
            value = tuple(sorted({**dict(value or ()), **dict(against)}.items()))
        out.append((name, value))
    return tuple(out)


def _groups(rows: Iterable[Row]) -> dict[GroupKey, list[Row]]:
    groups: dict[GroupKey, list[Row]] = {}
    for row in rows:
        groups.setdefault(group_key(row), []).append(row)
    return groups


def check_series(gates: list[Gate], planned: list[Row], baseline: list[Row] | None) -> None:
    """Before running: every gate names at least one planned series, and a relative gate has
    a baseline holding each of them (UsageError naming the gate otherwise)."""
    keys = list(_groups(planned))
    labels = {describe_group(k) for k in _groups(r for r in baseline or [] if is_timed(r))}
    for gate in gates:
        named = [k for k in keys if matches(gate, k)]
        if not named:
            have = ", ".join(sorted({describe_group(k) for k in keys}))
            raise UsageError(f"gate {gate.text!r}: no series of this run is {gate.series!r}; "
                             f"the run's series: {have}")
        against = gate.against
        lonely = [describe_group(k) for k in named
                  if against is not None and partner(k, against) not in keys]
        if lonely:
            raise UsageError(f"gate {gate.text!r}: {lonely[0]} has no series to compare "
                             f"with ({', '.join(f'{k}={v}' for k, v in against or ())})")
        if not gate.relative:
            continue
        if baseline is None:
            raise UsageError(f"gate {gate.text!r} is relative: give --baseline PATH (an "
                             "earlier run's results directory or metrics.json)")
        missing = [describe_group(k) for k in named if describe_group(k) not in labels]
        if missing:
            raise UsageError(f"gate {gate.text!r}: the baseline has no ok run of "
                             f"{', '.join(missing)}")


def _value(row: Row, metric: str) -> float | None:
    value: Any = row
    for part in metric.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def mean_of(rows: Iterable[Row], metric: str) -> tuple[float | None, int]:
    """The metric's mean over the timed rows that have it, and how many had it."""
    values = [v for r in rows if is_timed(r) for v in [_value(r, metric)] if v is not None]
    return (statistics.fmean(values) if values else None), len(values)


def _judge_one(gate: Gate, key: GroupKey, rows: list[Row],
               baseline: dict[str, list[Row]],
               groups: dict[GroupKey, list[Row]] | None = None) -> GateResult:
    label = describe_group(key)
    observed, runs = mean_of(rows, gate.metric)
    bound: float | None = gate.value
    reason = ""
    if gate.against is not None:
        other, _ = mean_of((groups or {}).get(partner(key, gate.against), []),
                           gate.against_metric)
        bound = None if other is None else gate.value * other
        reason = "" if other is not None else "no value of the series it is compared with"
    if gate.relative:
        base, _ = mean_of(baseline.get(label, []), gate.metric)
        bound = None if base is None else gate.value * base
        reason = "" if base is not None else "no baseline value"
    if observed is None:
        reason = "no ok run measured it"
    passed = (observed is not None and bound is not None
              and COMPARISONS[gate.mode][1](observed, bound))
    return GateResult(gate.text, label, gate.metric, gate.op, observed, bound, passed, runs,
                      reason)


def judge(gates: list[Gate], rows: list[Row], baseline: list[Row] | None = None
          ) -> list[GateResult]:
    """Every gate on every series it names, in gate then series order."""
    groups = _groups(rows)
    by_label: dict[str, list[Row]] = {}
    for key, group in _groups(baseline or []).items():
        by_label.setdefault(describe_group(key), []).extend(group)
    return [_judge_one(gate, key, group, by_label, groups)
            for gate in gates for key, group in groups.items() if matches(gate, key)]


def all_passed(results: list[GateResult]) -> bool:
    return all(r.passed for r in results)


def kpi_results(rows: list[Row]) -> list[GateResult]:
    """A definitions run's KPIs (checked per test by definitions/kpis.py, recorded in each
    row's ``definition.kpis``) as gate results: one per test × topology and KPI."""
    out = []
    for row in rows:
        definition = row.get("definition") or {}
        topology = (row.get("config_set") or {}).get("topology", "?")
        for kpi in definition.get("kpis") or []:
            out.append(GateResult(kpi["kpi"], f"{row['command']} [{topology}]", kpi["path"],
                                  COMPARISONS[kpi["mode"]][0], kpi["value"], kpi["bound"],
                                  bool(kpi["passed"]), 1, kpi.get("reason") or ""))
    return out
