"""The terminal's speed-up tables of a run's sweeps (analysis/sweeps.py): per swept key, per
line (the other series) each value's rps, its speed-up over the line's first value, and p99."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.sweeps import Sweep


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def sweep_table(sweep: Sweep) -> Table:
    """One swept key: series, value, runs, mean rps, speed-up (×), mean p99."""
    table = Table(title=f"Sweep of {sweep.label} ({sweep.key}): speed-up over the first "
                        f"{sweep.label}")
    for name in ("series", sweep.label, "runs", "rps", "speed-up", "p99 ms"):
        table.add_column(name, justify="left" if name == "series" else "right")
    for line in sweep.lines:
        for index, point in enumerate(line.points):
            table.add_row(escape(line.series) if index == 0 else "", point.value,
                          str(point.runs), _number(point.rps, ",.0f"),
                          _number(point.speedup, ".2f") + ("×" if point.speedup else ""),
                          _number(point.p99_ms, ".3f"), end_section=index == len(line.points) - 1)
    return table


def sweep_tables(sweeps: list[Sweep]) -> list[Table]:
    return [sweep_table(s) for s in sweeps]
