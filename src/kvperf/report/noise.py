"""`kvperf noise`'s table: CV per side, σ of the log-ratio, rounds to flag each effect."""

from __future__ import annotations

import math

from rich.table import Table

from kvperf.analysis.comparison import describe_group
from kvperf.analysis.noise import FLAG_EFFECTS, NoiseRow


def noise_table(rows: list[NoiseRow], title: str,
                effects: tuple[float, ...] = FLAG_EFFECTS) -> Table:
    table = Table(title=title)
    for name in ("series", "metric", "CV A", "CV B", "σ log-ratio",
                 *(f"runs for {e:.0%}" for e in effects), "verdict"):
        table.add_column(name)
    for row in rows:
        c = row.comparison
        table.add_row(describe_group(c.group), c.metric, f"{c.base.cv:.1%}", f"{c.new.cv:.1%}",
                      "-" if math.isnan(row.sd_log) else f"{row.sd_log:.2%}",
                      *("-" if n is None else str(n) for n in row.runs_for),
                      c.decision.verdict.value)
    return table
