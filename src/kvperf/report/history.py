"""History as terminal tables: per series, one row per revision (mean, n, CV per metric); and
the two-revision view (rapidbyte-style): per metric A, B and the % change; and the cells as
JSON (--json)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence

from rich.table import Table

from kvperf.analysis.comparison import describe_group
from kvperf.results.row import SeriesParams
from kvperf.store.history import Cell, Revision

CellIndex = dict[tuple[str, str, str], Cell]  # (series_key, revision, metric) → cell


def index(cells: Sequence[Cell]) -> CellIndex:
    return {(c.series_key, c.revision, c.metric): c for c in cells}


def short(revision: str) -> str:
    """40-hex shas shortened to 10 characters; labels as they are."""
    is_sha = len(revision) == 40 and all(ch in "0123456789abcdef" for ch in revision)
    return revision[:10] if is_sha else revision


def describe(fields: SeriesParams) -> str:
    return describe_group(tuple(fields.items()))


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _cv(cell: Cell | None) -> str:
    return "-" if cell is None or math.isnan(cell.cv) else f"{cell.cv:.1%}"


def change_percent(a: Cell | None, b: Cell | None) -> float:
    """(B − A) / A × 100; NaN when a side is missing or A is zero."""
    if a is None or b is None or not a.mean:
        return math.nan
    return (b.mean - a.mean) / a.mean * 100


def series_order(cells: Sequence[Cell], fields: dict[str, SeriesParams]) -> list[str]:
    keys = {c.series_key for c in cells}
    return sorted(keys, key=lambda k: describe(fields.get(k, {})))


ENV_MARK = "⚙"


def history_table(key: str, fields: SeriesParams, revisions: Sequence[Revision],
                  cells: CellIndex, names: Sequence[str],
                  env_changed: Collection[str] = ()) -> Table:
    """A series' values per revision; ``env_changed``: revisions marked ⚙ (the machine's
    environment changed there)."""
    table = Table(title=f"{describe(fields)} · series {key}", title_justify="left")
    table.add_column("revision")
    table.add_column("date")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(f"{name} mean", justify="right")
        table.add_column("CV", justify="right")
    for rev in revisions:
        found = [cells.get((key, rev.name, name)) for name in names]
        if not any(found):
            continue
        n = max(c.n for c in found if c)
        mark = f" {ENV_MARK}" if rev.name in env_changed else ""
        row = [short(rev.name) + mark,
               rev.when.strftime("%Y-%m-%d %H:%M") if rev.when else "-", str(n)]
        for cell in found:
            row += [_number(cell.mean) if cell else "-", _cv(cell)]
        table.add_row(*row)
    return table


def change_table(key: str, fields: SeriesParams, a: str, b: str, cells: CellIndex,
                 names: Sequence[str], verdicts: Mapping[str, str] | None = None) -> Table:
    """Per metric: A, B, the % change and (``verdicts``: metric → text) the verdict."""
    table = Table(title=f"{describe(fields)} · series {key}", title_justify="left")
    for column in ("metric", short(a), "n", "CV", short(b), "n", "CV", "change", "verdict"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name in names:
        ca, cb = cells.get((key, a, name)), cells.get((key, b, name))
        if ca is None and cb is None:
            continue
        change = change_percent(ca, cb)
        table.add_row(name, _number(ca.mean) if ca else "-", str(ca.n) if ca else "-", _cv(ca),
                      _number(cb.mean) if cb else "-", str(cb.n) if cb else "-", _cv(cb),
                      "-" if math.isnan(change) else f"{change:+.1f}%",
                      (verdicts or {}).get(name, "-"))
    return table


def cells_json(cells: Sequence[Cell]) -> str:
    """`kvperf history --json`: the cells as a JSON list (NaN sd and CV as null)."""
    def clean(x: float) -> float | None:
        return None if math.isnan(x) else x
    return json.dumps([{"series_key": c.series_key, "revision": c.revision, "metric": c.metric,
                        "n": c.n, "mean": c.mean, "sd": clean(c.sd), "cv": clean(c.cv)}
                       for c in cells], indent=1)
