"""JSONPath subset, KPI bounds and exporter metrics over memtier's JSON layout."""

from __future__ import annotations

import pytest

from kvperf.definitions.exporter import evaluate
from kvperf.definitions.jsonpath import JsonPathError, find, parse
from kvperf.definitions.kpis import Kpi, all_passed, check, check_all

# The shape of memtier's --json-out-file (and kvload memtier's), trimmed.
MEMTIER = {
    "ALL STATS": {
        "Runtime": {"Start time": 1700000000000, "Total duration": 2000},
        "Sets": {"Ops/sec": 1000.5, "Percentile Latencies": {"p50.00": 0.2}},
        "Totals": {"Ops/sec": 11000.25, "Latency": 0.41, "Misses/sec": 0.0,
                   "Percentile Latencies": {"p50.00": 0.375, "p99.00": 1.2}},
    },
    "precision_summary": {"0.9": {"qps": 10, "p50": "x"}, "0.99": {"qps": 7}},
    "list": [1, 2, 3],
}


@pytest.mark.parametrize(("path", "expected"), [
    ('$."ALL STATS".Totals."Ops/sec"', [11000.25]),
    ('$."ALL STATS".Totals.Latency', [0.41]),
    ("$['ALL STATS']['Totals']['Percentile Latencies']['p99.00']", [1.2]),
    ('$."ALL STATS".Totals."Percentile Latencies"."p50.00"', [0.375]),
    ('$."ALL STATS".Runtime."Start time"', [1700000000000]),
    ("$.list[1]", [2]), ("$.list[-1]", [3]), ("$.list[*]", [1, 2, 3]),
    ('$."precision_summary".*.qps', [10, 7]),
    ('$."ALL STATS".Totals."Nope"', []), ("$.list[7]", []),
    ('"ALL STATS".Totals.Latency', [0.41]),  # no $: from the root
])
def test_find(path: str, expected: list[object]) -> None:
    assert [m.value for m in find(path, MEMTIER)] == expected


def test_concrete_paths_name_wildcard_matches() -> None:
    paths = [m.path for m in find('$."precision_summary".*.qps', MEMTIER)]
    assert paths == ['$.precision_summary."0.9".qps', '$.precision_summary."0.99".qps']


@pytest.mark.parametrize("bad", ['$."ALL STATS', "$.a[", "$.a[x]", "$..a", "$ a"])
def test_outside_the_subset(bad: str) -> None:
    with pytest.raises(JsonPathError):
        parse(bad)


@pytest.mark.parametrize(("mode", "bound", "passed"), [
    ("ge", 11000.25, True), ("ge", 11000.26, False), ("le", 11000.25, True),
    ("le", 11000, False), ("gt", 11000.25, False), ("gt", 11000, True),
    ("lt", 12000, True), ("lt", 11000.25, False), ("eq", 11000.25, True), ("eq", 1, False),
])
def test_kpi_modes(mode: str, bound: float, passed: bool) -> None:
    result = check(Kpi(mode, '$."ALL STATS".Totals."Ops/sec"', bound), MEMTIER)
    assert (result.passed, result.value) == (passed, 11000.25)


def test_kpi_without_a_value_fails() -> None:
    missing = check(Kpi("ge", "$.Tests.Overall.rps", 1), MEMTIER)
    not_number = check(Kpi("ge", '$."precision_summary"."0.9".p50', 1), MEMTIER)
    assert (missing.passed, missing.reason) == (False, "no value at this path")
    assert not not_number.passed and "not a number" in not_number.reason
    results = check_all((Kpi("ge", '$."ALL STATS".Totals."Ops/sec"', 1),
                         Kpi("le", "$.missing", 1)), MEMTIER)
    assert [r.passed for r in results] == [True, False] and not all_passed(results)


def test_exporter_metrics_named_by_their_paths() -> None:
    values = evaluate(('$."ALL STATS".Totals."Ops/sec"', '$."precision_summary".*.qps',
                       '$."precision_summary".*.p50', "$.MessageRate"), MEMTIER)
    assert [(v.name, v.value) for v in values] == [
        ('$."ALL STATS".Totals."Ops/sec"', 11000.25),
        ('$.precision_summary."0.9".qps', 10.0), ('$.precision_summary."0.99".qps', 7.0),
        ('$.precision_summary."0.9".p50', None), ("$.MessageRate", None)]
    assert values[3].missing.startswith("not a number") and values[4].missing
