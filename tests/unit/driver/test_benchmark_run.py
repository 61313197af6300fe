"""A redis-benchmark run's CSV → redisbench-admin's result document, the row's numbers and
the command mix. ``data/redis-benchmark-7.0.15-suite.csv`` is real output: redis-benchmark
7.0.15 ``--csv -n 2000 -c 5 -r 1000`` (the default suite: no ``-t``, no command) against
valkey-server 8.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.definitions.exporter import evaluate
from kvperf.definitions.kpis import Kpi, check_all
from kvperf.driver.benchmark_run import measurement, result_document, suite_mix
from kvperf.driver.csv_output import parse_csv_rows

SUITE = (Path(__file__).parent / "data" / "redis-benchmark-7.0.15-suite.csv").read_text()
SUITE_TESTS = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP",
               "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN",
               "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)",
               "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 500 elements)",
               "LRANGE_600 (first 600 elements)", "MSET (10 keys)"]


def test_the_default_suite_gives_one_entry_per_test_keyed_by_its_name() -> None:
    document = result_document(parse_csv_rows(SUITE))
    assert list(document["Tests"]) == SUITE_TESTS
    assert document["Tests"]["SET"] == {
        "rps": 45454.55, "avg_latency_ms": 0.068, "min_latency_ms": 0.024,
        "p50_latency_ms": 0.063, "p95_latency_ms": 0.095, "p99_latency_ms": 0.127,
        "max_latency_ms": 3.959}
    assert document["Tests"]["LRANGE_600 (first 600 elements)"]["rps"] == 15384.62


def test_the_full_suite_definitions_exporter_and_kpis_read_each_test() -> None:
    """redis-benchmark-full-suite-1Mkeys-100B's exporter reads ``$.Tests.*.rps``."""
    document = result_document(parse_csv_rows(SUITE))
    metrics = {m.name: m.value for m in evaluate(("$.Tests.*.rps",), document)}
    assert len(metrics) == len(SUITE_TESTS) and metrics["$.Tests.SET.rps"] == 45454.55
    assert all(value for value in metrics.values())
    kpis = check_all((Kpi("ge", "$.Tests.GET.rps", 40000.0),
                      Kpi("le", '$.Tests."MSET (10 keys)".p50_latency_ms', 0.05)), document)
    assert [(k.value, k.passed) for k in kpis] == [(42553.19, True), (0.071, False)]


def test_the_suite_as_one_load() -> None:
    """Each test ran 2000 requests: ops/s is all of them over the tests' summed time."""
    tests = result_document(parse_csv_rows(SUITE))["Tests"]
    row = measurement({"Tests": tests})
    assert row.rps == pytest.approx(20 / sum(1 / t["rps"] for t in tests.values()))
    assert 15384.62 < row.rps < 51282.05
    assert row.p99_latency_ms == 0.855 and row.max_latency_ms == 4.007  # the slowest test's
    assert row.min_latency_ms == 0.016


def test_the_suite_mix_is_each_tests_command_in_equal_shares() -> None:
    mix = suite_mix(result_document(parse_csv_rows(SUITE)))
    assert mix is not None and mix.keys() == {
        "ping", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop", "sadd", "hset",
        "spop", "zadd", "zpopmin", "lrange", "mset"}
    assert mix["lrange"] == pytest.approx(4 / 20) and mix["ping"] == pytest.approx(2 / 20)
    assert mix["set"] == pytest.approx(1 / 20) and sum(mix.values()) == pytest.approx(1)


def test_one_row_stays_the_overall_test() -> None:
    one = SUITE.splitlines()[0] + "\n" + SUITE.splitlines()[3] + "\n"
    document = result_document(parse_csv_rows(one))
    assert list(document["Tests"]) == ["Overall"] and suite_mix(document) is None
    assert measurement(document).rps == 45454.55


def test_a_test_twice_is_refused() -> None:
    lines = SUITE.splitlines()
    with pytest.raises(ValueError, match="'SET' appears twice"):
        result_document(parse_csv_rows("\n".join([*lines, lines[3]])))
