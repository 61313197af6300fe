"""CSV parsing of valkey-benchmark output, including the cluster preamble."""

from __future__ import annotations

import pytest

from kvperf.driver.csv_output import parse_csv_rows, pick_row, row_numbers

HEADER = ('"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",'
          '"p99_latency_ms","max_latency_ms"')


def test_cluster_preamble_before_the_header() -> None:
    text = ("Cluster has 3 master nodes:\n\nMaster 0: abc 127.0.0.1:30001\n"
            "Master 1: def 127.0.0.1:30002\n\n" + HEADER + "\n"
            '"SET","12345.67","0.5","0.1","0.4","0.9","1.2","3.0"\n')
    row = pick_row(parse_csv_rows(text), "SET")
    assert row_numbers(row)["rps"] == pytest.approx(12345.67)


def test_pick_row_by_title_among_several() -> None:
    text = (HEADER + '\n"LPUSH (needed to benchmark LRANGE)","1","1","1","1","1","1","1"\n'
            '"LRANGE_100 (first 100 elements)","2","1","1","1","1","1","1"\n')
    row = pick_row(parse_csv_rows(text), "LRANGE_100 (first 100 elements)")
    assert row["rps"] == "2"
    with pytest.raises(ValueError, match="expected one result row"):
        pick_row(parse_csv_rows(text), "GET")


def test_no_header_and_non_finite_values_are_errors() -> None:
    with pytest.raises(ValueError, match="no CSV header"):
        parse_csv_rows("Error: Connection refused\n")
    rows = parse_csv_rows(HEADER + '\n"GET","inf","0.1","0.1","0.1","0.1","0.1","0.1"\n')
    with pytest.raises(ValueError, match="measured nothing"):
        row_numbers(rows[0])
    rows = parse_csv_rows(HEADER + '\n"GET","0.00","0.1","0.1","0.1","0.1","0.1","0.1"\n')
    with pytest.raises(ValueError, match=r"rps is 0\.0"):
        row_numbers(rows[0])


def test_progress_carriage_returns_do_not_hide_the_header() -> None:
    text = "SET: rps=1000.0 (overall: 900.0)\r" + HEADER + '\n"SET","5","1","1","1","1","1","1"\n'
    assert pick_row(parse_csv_rows(text), "SET")["rps"] == "5"
