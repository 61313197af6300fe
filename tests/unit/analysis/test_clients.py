"""Client lines: a client × workload over its runs, ratios to kvload's line on the same
workload (analysis/clients.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hdrh.histogram import HdrHistogram

from kvperf.analysis.clients import client_lines
from kvperf.results.row import Row


def _row(rps: float, cpu: float, harness: dict[str, Any] | None = None,
         command: str = "SET") -> Row:
    client_set = ({"client": harness["name"], "concurrency": harness["model"]}
                  if harness else None)
    return Row(command=command, data_size=100, pipeline=1, clients=1, requests=1000,
               duration=None, keyspacelen=1000, warmup=0, tls=False, io_threads=None,
               config_set=client_set, rps=rps, status="ok", tool="kvload",
               tool_version="0.1.0", client={"client_cpu_us_per_request": cpu},
               server={"cpu_us_per_request": 10.0}, harness=harness)  # type: ignore[typeddict-item]


PY = {"name": "redis-py", "version": "8.1.0", "model": "single", "max_rss_kib": 2048,
      "allocations": {"per_op": 0.5, "unit": "blocks", "source": "x"}}


def test_each_client_gets_its_ratios_to_kvload_on_the_same_workload() -> None:
    rows = [_row(40_000, 10.0), _row(10_000, 120.0, PY), _row(12_000, 100.0, PY),
            _row(20_000, 12.0, command="GET"), _row(5_000, 60.0, PY, "GET")]
    lines = client_lines(rows, lambda r: None)
    assert [(ln.workload, ln.client, ln.runs) for ln in lines] == [
        ("SET d=100 P=1 c=1", "kvload 0.1.0", 1),
        ("SET d=100 P=1 c=1", "redis-py 8.1.0 single", 2),
        ("GET d=100 P=1 c=1", "kvload 0.1.0", 1),
        ("GET d=100 P=1 c=1", "redis-py 8.1.0 single", 1)]
    kvload, py = lines[0], lines[1]
    assert kvload.rps_ratio is None and py.rps == 11_000 and py.rps_ratio == 11_000 / 40_000
    assert py.cpu_ratio == 110.0 / 10.0 and py.rss_mib == 2.0
    assert py.allocations == "0.50 blocks" and lines[3].rps_ratio == 0.25


def test_no_client_rows_no_lines_and_no_kvload_no_ratio() -> None:
    assert client_lines([_row(40_000, 10.0)], lambda r: None) == []
    (line,) = client_lines([_row(10_000, 120.0, PY)], lambda r: None)
    assert line.rps_ratio is None and line.cpu_ratio is None


def test_a_client_series_is_described_with_its_label_however_config_set_is_held() -> None:
    """Rows hold config_set as a dict, group keys as pairs, the store as JSON text (history)."""
    from kvperf.analysis.comparison import describe_group

    held = {"client": "redis-py", "concurrency": "pool"}
    for config_set in (held, tuple(sorted(held.items())),
                       '{"client":"redis-py","concurrency":"pool"}'):
        key = (("command", "SET"), ("data_size", 100), ("config_set", config_set))
        assert describe_group(key) == "SET d=100 redis-py:pool"
    assert describe_group((("command", "SET"), ("config_set", "not json"))) == "SET"


def test_a_line_carries_calls_per_read_the_latency_kind_and_the_process_total() -> None:
    """A harness's latency is its ``service`` histogram (closed loop: uncorrected), kvload's
    its corrected one; calls per read and the batching verdict come from ``harness.wire``;
    the process total sits beside the window's client CPU."""
    from kvperf.report.clients import calls_per_read, clients_markdown

    hist = HdrHistogram(1, 60_000_000, 3)
    hist.record_value(250)
    encoded = hist.encode().decode()
    wired = {**PY, "process_cpu_us_per_op": 130.0,
             "wire": {"calls_per_read": 7.5, "batching": "implicit"}}
    rows = [_row(40_000, 10.0), _row(10_000, 120.0, wired)]
    files = {id(rows[0]): {"corrected": encoded, "service": encoded, "unit": "us"},
             id(rows[1]): {"service": encoded, "unit": "us"}}
    kvload, py = client_lines(rows, lambda r: files[id(r)])
    assert (kvload.latency, py.latency) == ("corrected", "uncorrected")
    assert py.p50_ms == pytest.approx(0.25, rel=0.01)
    assert py.calls_per_read == 7.5 and py.batching == "implicit"
    assert py.client_cpu_us == 120.0 and py.process_cpu_us == 130.0
    assert calls_per_read(py) == "7.5 implicit" and calls_per_read(kvload) == "-"
    table = clients_markdown([kvload, py])
    assert "| uncorrected | 7.5 implicit | 120.00 | 12.00× | 130.00 |" in table, table


def test_allocations_are_bytes_per_operation_marked_where_approximate_never_empty() -> None:
    """Every line's allocation cell says something: bytes per operation (the median over
    runs) from the allocation pass, ``≈`` when a runtime only approximates, an older
    harness's own unit as it said, ``not reported`` / ``not measured`` (kvload)."""
    from kvperf.report.clients import clients_markdown

    def harness(per_op: float, exact: bool, unit: str = "bytes") -> dict[str, Any]:
        return {**PY, "allocations": {"per_op": per_op, "unit": unit, "method": "m",
                                      "exact": exact, "ops": 1000}}

    exact = [_row(9_000, 1.0, harness(b, True)) for b in (300.0, 312.4, 2000.0)]
    (kvload, line) = client_lines([_row(40_000, 1.0), *exact], lambda r: None)
    assert (kvload.allocations, line.allocations) == ("not measured", "312 B")
    mixed = [_row(9_000, 1.0, harness(3.25, True)), _row(9_000, 1.0, harness(3.25, False))]
    assert client_lines(mixed, lambda r: None)[0].allocations == "≈3.2 B"
    bare = {**PY, "allocations": None}
    (line,) = client_lines([_row(9_000, 1.0, bare)], lambda r: None)
    assert line.allocations == "not reported"
    markdown = clients_markdown(client_lines([_row(40_000, 1.0), *exact], lambda r: None))
    assert "| not measured |" in markdown and "| 312 B |" in markdown
