"""The gate table of a run (terminal) and its ``gates.json`` document (versioned).

``gates.json`` versions (``kvperf_gates``):
  1 — first version: ``passed`` (every gate held), ``failed`` (how many did not), ``gates``:
      one entry per gate and series it names with gate (as written), series, metric, op,
      observed (mean over timed runs; null when none), bound (null when a relative gate's
      baseline had none), runs, passed, reason.
"""

from __future__ import annotations

from dataclasses import asdict

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.gates import GateResult, all_passed
from kvperf.core.jsontypes import JsonObject

GATES_VERSION = 1


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def gates_table(results: list[GateResult]) -> Table:
    """gate, series, metric, observed, bound, result: one line per gate and series."""
    failed = sum(1 for r in results if not r.passed)
    table = Table(title=f"Gates: {len(results) - failed} passed, {failed} failed")
    for name in ("gate", "series", "metric", "observed", "bound", "result"):
        table.add_column(name, justify="right" if name in ("observed", "bound") else "left")
    for r in results:
        verdict = "[green]pass[/green]" if r.passed else (
            f"[red]FAIL[/red] {escape(r.reason)}".strip())
        table.add_row(escape(r.gate), escape(r.series), r.metric, _number(r.observed),
                      f"{r.op} {_number(r.bound)}", verdict)
    return table


def gates_document(results: list[GateResult]) -> JsonObject:
    """The ``gates.json`` content (module docstring)."""
    return {"kvperf_gates": GATES_VERSION, "passed": all_passed(results),
            "failed": sum(1 for r in results if not r.passed),
            "gates": [asdict(r) for r in results]}
