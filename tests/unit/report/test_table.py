"""The results table marks client-bound trials (the documented client-saturation warning)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from kvperf.report.failover import failover_table, timeline_table
from kvperf.report.table import results_table


def _row(saturated: bool) -> dict[str, Any]:
    return {"command": "SET", "data_size": 64, "pipeline": 1, "clients": 50, "run": 1,
            "rps": 100000.0, "p50_latency_ms": 0.4, "p99_latency_ms": 1.2, "status": "ok",
            "error": None, "client_saturated": saturated}


def _render(rows: list[dict[str, Any]]) -> str:
    console = Console(width=300, record=True)
    console.print(results_table(rows, "t"))
    return console.export_text()


def test_a_saturated_client_is_flagged_per_row_and_in_the_caption() -> None:
    text = _render([_row(True), _row(False)])
    assert text.count("! client saturated") == 2  # the row and the caption
    assert "client saturated in 1 trial(s)" in text and "pin the client" in text


def test_no_warning_when_the_client_kept_up() -> None:
    assert "saturated" not in _render([_row(False)])


def test_the_failover_table_lists_each_fault_with_the_trials_totals() -> None:
    window = {"time_to_first_error_s": 0.01, "unavailable_s": 1.2,
              "unavailable_from_unix": 10.0, "unavailable_to_unix": 11.2}
    record = {"faults": [
        {"at_s": 1.0, "action": "kill", "target": "primary", "window": window},
        {"at_s": 2.0, "action": "promote", "target": "replica", "window": None}],
        "errors_by_kind": {"READONLY": 40, "connection": 4},
        "p99_ms": {"before": 0.2, "during": 3.0, "after": None},
        "acknowledged_writes": {"checked": 5000, "lost": 2}}
    rows: list[Any] = [{"command": "SET", "run": 1, "failover": record}, {"command": "GET"}]
    table = failover_table(rows)
    assert table is not None and failover_table(rows[1:]) is None
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    assert "kill primary" in text and "promote replica" in text and "1.200" in text
    assert "READONLY 40, connection 4" in text and "0.200/3.000/-" in text
    assert "2 of 5,000" in text


def test_the_timeline_table_marks_the_second_each_fault_started_in() -> None:
    record = {"start_unix": 100.0, "seconds": [{"t_s": 0, "ok": 900, "errors": 0},
                                               {"t_s": 1, "ok": 0, "errors": 12}],
              "faults": [{"action": "kill", "target": "primary", "started_unix": 101.2}]}
    rows: list[Any] = [{"command": "SET", "run": 1, "failover": record}]
    table = timeline_table(rows)
    assert table is not None and timeline_table([]) is None
    console = Console(width=120, record=True)
    console.print(table)
    lines = console.export_text().splitlines()
    assert any("900" in line and "kill" not in line for line in lines)
    assert any(" 1 " in line and "12" in line and "kill primary" in line for line in lines)
