"""A redis-benchmark suite's row in the definitions' results table: a line per test."""

from __future__ import annotations

from typing import Any, cast

from rich.console import Console

from kvperf.report import definitions as report
from kvperf.results.row import Row


def _suite_row() -> Row:
    def numbers(rps: float, p50: float) -> dict[str, float]:
        return {"rps": rps, "p50_latency_ms": p50, "p99_latency_ms": 2 * p50}
    row: dict[str, Any] = {
        "command": "full-suite", "config_set": {"topology": "oss-standalone"},
        "status": "ok", "rps": 30000.0, "p50_latency_ms": 0.3, "p99_latency_ms": 0.6,
        "checks": {"keyspacelen": 0}, "kpis": [],
        "definition": {"command_mix": {}, "kpis": [], "tests": {
            "SET": numbers(45454.55, 0.063),
            "LRANGE_600 (first 600 elements)": numbers(15384.62, 0.3)}}}
    return cast(Row, row)


def test_each_test_of_a_suite_has_its_line_under_the_definitions() -> None:
    console = Console(width=200, record=True)
    console.print(report.results_table([_suite_row()], "t"))
    lines = console.export_text().splitlines()
    (main,) = [line for line in lines if "full-suite" in line]
    set_line = lines[lines.index(main) + 1]
    assert "[SET]" in set_line and "45,455" in set_line and "0.063" in set_line
    lrange = lines[lines.index(main) + 2]
    assert "[LRANGE_600 (first 600 elements)]" in lrange and "15,385" in lrange


def test_the_progress_line_says_the_suite_and_whose_percentiles() -> None:
    assert "(2 tests, p50/p99 the slowest test's)" in report.test_line(1, 1, _suite_row())
