"""The pure parts of running definitions: the command mix a memtier run asks for, CPU
pinning per topology, memtier's JSON → the row's metrics, the row and its stored metrics."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from kvperf.core.errors import DriverError
from kvperf.definitions.memtier import command_mix, parse
from kvperf.driver.benchmark_run import BenchmarkToolRun, version_key
from kvperf.driver.benchmark_run import command_mix as benchmark_mix
from kvperf.driver.memtier import measurement
from kvperf.pipeline.definitions.definitions import pinning
from kvperf.results.row import (
    FORMAT_VERSION,
    DefinitionTest,
    Details,
    RunContext,
    TrialOutcome,
    build_row,
    series_key,
)
from kvperf.store.records import metric_values


@pytest.mark.parametrize(("args", "mix"), [
    ("--test-time 2", {"set": 1 / 11, "get": 10 / 11}),  # memtier's default --ratio 1:10
    ("--ratio 1:0 -n allkeys", {"set": 1.0}),
    ("--ratio 1:1", {"set": 0.5, "get": 0.5}),
    ('--command "HSET __key__ f __data__"', {"hset": 1.0}),
    ('--command "GET s:__key__" --command-ratio 90 --command "SET s:__key__ x" '
     "--command-ratio=10", {"get": 0.9, "set": 0.1}),
    ('--command "GET a" --command "GET b" --command "SET c d" --command-ratio 2',
     {"get": 0.5, "set": 0.5}),
])
def test_command_mix_follows_memtier_weights(args: str, mix: dict[str, float]) -> None:
    assert command_mix(parse(args)) == pytest.approx(mix)


@pytest.mark.parametrize(("io_threads", "cpus", "server", "client", "noted"), [
    (1, {0, 1}, (0,), (1,), False),
    (1, {0}, None, None, False),
    (2, {0, 1}, None, None, True),
    (4, set(range(8)), (0, 1, 2, 3), (4,), False),
])
def test_pinning(io_threads: int, cpus: set[int], server: tuple[int, ...] | None,
                 client: tuple[int, ...] | None, noted: bool) -> None:
    got_server, got_client, note = pinning(io_threads, cpus)
    assert (got_server, got_client, note is not None) == (server, client, noted)


def _memtier(totals: dict[str, object]) -> dict[str, object]:
    return {"ALL STATS": {"Runtime": {}, "Totals": totals}}


def test_measurement_from_memtier_totals() -> None:
    m = measurement(_memtier({"Count": 1000, "Ops/sec": 500.5, "Latency": 0.2,
                              "Min Latency": 0.1, "Max Latency": 3.0,
                              "Percentile Latencies": {"p50.00": 0.15, "p99.00": 0.9}}))
    assert (m.rps, m.avg_latency_ms, m.min_latency_ms, m.p50_latency_ms, m.p99_latency_ms,
            m.max_latency_ms, m.requests) == (500.5, 0.2, 0.1, 0.15, 0.9, 3.0, 1000)
    assert math.isnan(m.p95_latency_ms)  # not asked for: null in the row


@pytest.mark.parametrize("document", [{}, {"ALL STATS": {}}, _memtier({"Count": 1})])
def test_measurement_without_totals_is_a_driver_error(document: dict[str, object]) -> None:
    with pytest.raises(DriverError, match="ALL STATS"):
        measurement(document)


def test_definition_row_is_a_versioned_row_with_its_own_series() -> None:
    outcome = TrialOutcome(measurement=measurement(_memtier({
        "Ops/sec": 10.0, "Latency": 1.0, "Percentile Latencies": {"p50.00": 1.0}})))
    context = RunContext("label", None, "kvload memtier", "0.1.0", "valkey-8.0.1")
    metrics = {'$."ALL STATS".Totals."Ops/sec"': 10.0, '$."MessageRate"': None}
    rows = [build_row(DefinitionTest("def-a", topology, "t1", duration=2).series(), context,
                      outcome, datetime(2026, 1, 1, tzinfo=UTC),
                      Details(definition={"name": "def-a", "metrics": metrics}))
            for topology in ("oss-standalone", "oss-standalone-02-io-threads")]
    row = rows[0]
    assert row["kvperf_format"] == FORMAT_VERSION == 10
    assert (row["command"], row["config_set"], row["status"]) == (
        "def-a", {"topology": "oss-standalone"}, "ok")
    assert row["p95_latency_ms"] is None and row["p50_latency_ms"] == 1.0
    assert series_key(rows[0]) != series_key(rows[1])
    stored = metric_values(row)
    assert stored['$."ALL STATS".Totals."Ops/sec"'] == 10.0 and stored["rps"] == 10.0
    assert '$."MessageRate"' not in stored


@pytest.mark.parametrize(("argv", "mix"), [
    (("-c", "10", "-n", "100", "-r", "10", "SET", "key:__rand_int__", "v"), {"set": 1.0}),
    (("-q", "-P", "4", "-t", "set,get"), {"set": 0.5, "get": 0.5}),
    (("-n", "100"), {}),
])
def test_benchmark_command_mix(argv: tuple[str, ...], mix: dict[str, float]) -> None:
    assert benchmark_mix(argv) == mix


def test_min_tool_version() -> None:
    tool = BenchmarkToolRun("redis-benchmark", "/usr/bin/redis-benchmark", "7.0.15")
    assert tool.too_old("6.2.0") is None and tool.too_old(None) is None
    assert tool.too_old("7.2") == "redis-benchmark 7.0.15 is older than min-tool-version 7.2"
    assert version_key("8.0.1-rc1") == (8, 0, 1)
