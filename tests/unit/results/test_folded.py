"""Folded stacks merged and scaled per request for differential flamegraphs (pure)."""

from __future__ import annotations

from collections import Counter

from kvperf.results.folded import parse, per_request, render, requests_of


def test_parse_sums_repeated_stacks_and_skips_malformed_lines() -> None:
    text = "s;main;setCommand 1001001\ns;main;setCommand 1001001\ns;main 5\nno-count\n\n"
    assert parse(text) == Counter({"s;main;setCommand": 2002002, "s;main": 5})


def test_per_request_is_picoseconds_of_cpu_per_request() -> None:
    # 2 ms of CPU over 1,000 requests = 2 µs = 2,000,000 ps per request
    assert per_request(Counter({"a": 2_000_000}), 1000) == Counter({"a": 2_000_000})
    assert per_request(Counter({"a": 1001001, "b": 1}), 4000) == Counter({"a": 250250, "b": 0})


def test_render_sorts_and_drops_zero_counts() -> None:
    assert render(Counter({"b;c": 2, "a": 1, "z": 0})) == "a 1\nb;c 2\n"


def test_requests_from_server_calls_else_rps_times_measure_seconds() -> None:
    assert requests_of({"server": {"calls": 20000}, "rps": 1.0}) == 20000.0
    assert requests_of({"server": {}, "rps": 1000.0, "stage_seconds": {"measure": 2.5}}) == 2500.0
    assert requests_of({"server": {"calls": None}, "rps": None}) is None
