"""Rendering benchmark definitions' runs: a progress line per test, the results table (a
redis-benchmark suite's tests each on a line of their own, under its row) and the KPI
table (bound, value, pass/fail per KPI), all from rows (pure but for printing)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kvperf.results.row import Row, is_ok


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _topology(row: Row) -> str:
    return (row.get("config_set") or {}).get("topology", "?")


def rate(rps: float) -> str:
    """Ops/s as the tables show them: whole numbers, but a slow test's (a reload, a SAVE:
    under 10 ops/s) with two decimals, so 0.39 is never shown as 0."""
    return f"{rps:,.0f}" if rps >= 10 or rps == 0 else f"{rps:.2f}"


def test_line(position: int, total: int, row: Row) -> str:
    """``[2/5] name on topology: ok 123,456 ops/s p50 0.2 ms`` (or the failure)."""
    side = f"{escape(str(row['side']))} round {row['run']}: " if row.get("side") else ""
    where = f"[{position}/{total}] {side}{escape(row['command'])} on {_topology(row)}"
    if not is_ok(row):
        return f"{where}: [red]failed[/red]: {escape(str(row['error']))}"
    kpis = (row.get("definition") or {}).get("kpis") or []
    failed = sum(1 for k in kpis if not k["passed"])
    gate = (f", [red]{failed} KPI(s) failed[/red]" if failed else
            f", {len(kpis)} KPI(s) passed" if kpis else "")
    tests = (row.get("definition") or {}).get("tests") or {}
    suite = f" ({len(tests)} tests, p50/p99 the slowest test's)" if tests else ""
    return (f"{where}: [green]ok[/green] {rate(row['rps'] or 0.0)} ops/s, p50 "
            f"{_ms(row['p50_latency_ms'])} ms, p99 {_ms(row['p99_latency_ms'])} ms{suite}"
            f"{gate}")


class DefinitionProgress:
    """An Observer (pipeline/run/model.py) printing one line per finished test."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.position = 0
        self.total = 0

    def started(self, work: object, position: int, total: int) -> None:
        self.position, self.total = position, total

    def stage(self, work: object, name: str) -> None:
        pass

    def finished(self, work: object, row: Row) -> None:
        self.console.print(test_line(self.position, self.total, row), soft_wrap=True)


def results_table(rows: list[Row], title: str) -> Table:
    table = Table(title=title)
    for name in ("definition", "topology", "status", "ops/s", "p50 ms", "p99 ms", "keys",
                 "command mix (executed)"):
        table.add_column(name, justify="right" if name in ("ops/s", "p50 ms", "p99 ms",
                                                         "keys") else "left")
    for row in rows:
        mix = (row.get("definition") or {}).get("command_mix") or {}
        executed = " ".join(f"{n} {m['executed']:.1%}" for n, m in mix.items()
                            if m.get("executed") is not None)
        table.add_row(escape(row["command"]), _topology(row),
                      "ok" if is_ok(row) else "[red]failed[/red]",
                      rate(row["rps"]) if row["rps"] is not None else "-",
                      _ms(row["p50_latency_ms"]), _ms(row["p99_latency_ms"]),
                      str(row["checks"].get("keyspacelen", "-")), executed)
        for test, numbers in ((row.get("definition") or {}).get("tests") or {}).items():
            table.add_row(f"  [{escape(test)}]", "", "", rate(numbers["rps"]),
                          _ms(numbers["p50_latency_ms"]), _ms(numbers["p99_latency_ms"]), "",
                          "")
    return table


def kpi_table(rows: list[Row]) -> Table | None:
    """One line per KPI of every test that has some (None when no test has any)."""
    table = Table(title="KPIs")
    for name in ("definition", "topology", "KPI", "bound", "value", "result"):
        table.add_column(name)
    count = 0
    for row in rows:
        for kpi in (row.get("definition") or {}).get("kpis") or []:
            count += 1
            value = "-" if kpi["value"] is None else f"{kpi['value']:g}"
            verdict = "[green]pass[/green]" if kpi["passed"] else (
                f"[red]fail[/red] {escape(kpi['reason'])}".strip())
            table.add_row(escape(row["command"]), _topology(row),
                          escape(kpi["path"]), f"{kpi['mode']} {kpi['bound']:g}", value,
                          verdict)
    return table if count else None
