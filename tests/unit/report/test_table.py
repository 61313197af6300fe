"""The results table marks client-bound trials (the documented client-saturation warning)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

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
