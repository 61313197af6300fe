"""KPI gates (analysis/gates.py): the grammar, series matching, and judging on rows."""

from __future__ import annotations

from typing import Any

import pytest

from kvperf.analysis.gates import all_passed, check_series, judge, kpi_results, parse_gate
from kvperf.core.errors import UsageError


def _row(command: str, pipeline: int, run: int, rps: float, p99: float, status: str = "ok",
         **extra: Any) -> dict[str, Any]:
    return {"command": command, "data_size": 64, "pipeline": pipeline, "clients": 50,
            "duration": 1, "run": run, "status": status, "rps": rps,
            "p99_latency_ms": p99, "trial_id": f"{command}-{pipeline}", **extra}


ROWS = [_row("SET", 1, 1, 100_000, 0.5), _row("SET", 1, 2, 120_000, 0.7),
        _row("SET", 16, 1, 500_000, 1.5), _row("SET", 16, 2, 0, 0, status="failed"),
        _row("GET", 1, 1, 150_000, 0.4)]


def test_parse_the_three_forms() -> None:
    absolute = parse_gate("SET.rps>=100000")
    assert (absolute.command, absolute.params, absolute.metric, absolute.mode,
            absolute.value, absolute.relative) == ("SET", (), "rps", "ge", 100_000, False)
    latency = parse_gate("SET P=16 d=64.p99_latency_ms <= 1")
    assert latency.params == (("pipeline", "16"), ("data_size", "64"))
    assert latency.mode == "le" and latency.series == "SET P=16 d=64"
    relative = parse_gate("GET.rps>=0.95*baseline")
    assert relative.relative and relative.value == 0.95 and relative.op == ">="
    assert parse_gate("GET.rps == baseline").value == 1.0


def test_series_names_with_spaces_and_nested_metrics() -> None:
    gate = parse_gate("SET:GET 1:10 clients=50.server.cpu_us_per_request<2.5")
    assert gate.command == "SET:GET 1:10" and gate.params == (("clients", "50"),)
    assert gate.metric == "server.cpu_us_per_request" and gate.mode == "lt"


@pytest.mark.parametrize(("text", "named"), [
    ("SET.rps 100", "no comparison"),
    ("SET.rpz>=1", "known metric"),
    ("rps>=1", "known metric"),
    ("SET X=1.rps>=1", "unknown series parameter 'X=1'"),
    ("P=16.rps>=1", "names no command"),
    ("SET.rps>=fast", "not a number"),
    ("SET.rps>>1", "not a number"),
    ("SET.rps>=2*baseline*2", "not a number"),
])
def test_malformed_gates_are_usage_errors_naming_them(text: str, named: str) -> None:
    with pytest.raises(UsageError, match=named) as caught:
        parse_gate(text)
    assert text in str(caught.value) and caught.value.exit_code == 2


def test_judging_uses_the_mean_of_timed_runs_per_series() -> None:
    results = judge([parse_gate("SET.rps>=110000")], ROWS)
    by_series = {r.series: r for r in results}
    assert set(by_series) == {"SET d=64 P=1 c=50", "SET d=64 P=16 c=50"}
    low = by_series["SET d=64 P=1 c=50"]
    assert low.observed == 110_000 and low.runs == 2 and low.passed  # mean of 100k and 120k
    high = by_series["SET d=64 P=16 c=50"]
    assert high.observed == 500_000 and high.runs == 1  # the failed run is left out
    assert not judge([parse_gate("SET P=1.rps>110000")], ROWS)[0].passed  # strict
    latency = judge([parse_gate("SET P=16.p99_latency_ms<=1")], ROWS)
    assert [r.passed for r in latency] == [False] and not all_passed(latency)


def test_a_series_without_an_ok_run_fails() -> None:
    rows = [_row("SET", 1, 1, 0, 0, status="failed")]
    [result] = judge([parse_gate("SET.rps>=1")], rows)
    assert not result.passed and result.observed is None and "no ok run" in result.reason


def test_relative_gates_scale_the_baseline_of_the_same_series() -> None:
    baseline = [_row("SET", 1, 1, 100_000, 0.5, duration=3), _row("SET", 16, 1, 600_000, 1.0)]
    results = judge([parse_gate("SET.rps>=0.95*baseline")], ROWS, baseline)
    by_series = {r.series: r for r in results}
    assert by_series["SET d=64 P=1 c=50"].bound == pytest.approx(95_000)
    assert by_series["SET d=64 P=1 c=50"].passed  # 110k ≥ 95k (durations may differ)
    assert by_series["SET d=64 P=16 c=50"].bound == pytest.approx(570_000)
    assert not by_series["SET d=64 P=16 c=50"].passed  # 500k < 570k


def test_series_are_checked_against_the_plan_and_the_baseline() -> None:
    check_series([parse_gate("set p=1.rps>=1")], ROWS, None)  # case-insensitive
    with pytest.raises(UsageError, match=r"no series of this run is 'HSET'.*SET d=64 P=1"):
        check_series([parse_gate("HSET.rps>=1")], ROWS, None)
    with pytest.raises(UsageError, match="give --baseline PATH"):
        check_series([parse_gate("SET.rps>=baseline")], ROWS, None)
    with pytest.raises(UsageError, match="baseline has no ok run of SET d=64 P=16 c=50"):
        check_series([parse_gate("SET.rps>=baseline")], ROWS, [_row("SET", 1, 1, 1.0, 1.0)])


def test_definition_kpis_become_gate_results() -> None:
    row = {"command": "set-bench", "config_set": {"topology": "oss-standalone"},
           "definition": {"kpis": [{"kpi": "$.rps >= 100", "mode": "ge", "path": "$.rps",
                                    "bound": 100.0, "value": 50.0, "passed": False,
                                    "reason": ""}]}}
    [result] = kpi_results([row, {"command": "x", "definition": None}])
    assert (result.series, result.op, result.observed, result.bound, result.passed) == (
        "set-bench [oss-standalone]", ">=", 50.0, 100.0, False)
