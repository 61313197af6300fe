"""Rendering instruction counts: a run's per-trial table, and an A/B comparison (terminal and
markdown) with each series' verdicts and the functions whose inclusive cost moved most."""

from __future__ import annotations

import math
import statistics

from rich.table import Table

from kvperf.analysis.comparison import describe_group
from kvperf.analysis.instructions import (
    InstructionDecision,
    InstructionMetric,
    MovedFunction,
    SeriesInstructions,
)
from kvperf.analysis.verdict import Verdict
from kvperf.report.comparison import VERDICT_MARK
from kvperf.results.row import Row

MARK = VERDICT_MARK


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2%}"


def _side(values: tuple[float, ...]) -> str:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:,.1f} (n=1)"
    spread = (max(values) - min(values)) / mean if mean else math.nan
    return f"{mean:,.1f} (n={len(values)}, spread {_pct(spread)})"


def _metric_cells(series: SeriesInstructions, m: InstructionMetric) -> list[str]:
    d = m.decision
    return [describe_group(series.group), m.label, _side(m.base), _side(m.new),
            f"{d.change:+.3%}", _pct(d.threshold), _verdict(d)]


def _verdict(d: InstructionDecision) -> str:
    explained = d.verdict in (Verdict.INCONCLUSIVE, Verdict.UNSTABLE) or not d.statistics
    return f"{MARK[d.verdict]} ({d.reason})" if explained else MARK[d.verdict]


METRIC_COLUMNS = ("series", "metric", "baseline", "new", "change", "threshold", "verdict")
MOVED_COLUMNS = ("function", "baseline /req", "new /req", "Δ /req", "change")


def moved_cells(f: MovedFunction) -> list[str]:
    change = "new" if math.isinf(f.change) else f"{f.change:+.2%}"
    return [f.name, f"{f.base:,.1f}", f"{f.new:,.1f}", f"{f.delta:+,.1f}", change]


def terminal_tables(results: list[SeriesInstructions], base_name: str,
                    new_name: str) -> list[Table]:
    """The verdict table, then one moved-functions table per series."""
    verdicts = Table(title=f"instructions: {new_name} vs {base_name}")
    for name in METRIC_COLUMNS:
        verdicts.add_column(name)
    for series in results:
        for m in series.metrics:
            verdicts.add_row(*_metric_cells(series, m))
    tables = [verdicts]
    for series in results:
        moved = Table(title=f"{describe_group(series.group)}: inclusive cost moved most")
        for name in MOVED_COLUMNS:
            moved.add_column(name)
        for f in series.moved:
            moved.add_row(*moved_cells(f))
        tables.append(moved)
    return tables


def _md(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


NOTE = ("Instructions counted by callgrind during the measure stage only. A metric is flagged "
        "when the t-test on log counts is significant at α=0.01 (corrected across series, as "
        "in every kvperf comparison) and its change is beyond the minimum effect "
        "({min_effect:.1%}); one run per side: the change against the minimum effect, "
        "without statistics. More instructions is worse. Moved "
        "functions: inclusive cost per request, callers of a changed function move with it, "
        "so the most specific function of a similar move is listed first.")


def markdown(results: list[SeriesInstructions], base_name: str, new_name: str,
             min_effect: float) -> str:
    """A PR-comment report: verdicts, then the top moved functions of each series."""
    flagged = sum(1 for s in results for m in s.metrics if m.decision.flagged)
    out = [f"## kvperf instructions: `{new_name}` vs `{base_name}`", "",
           f"{len(results)} series, {flagged} metric(s) flagged.", "",
           _md(list(METRIC_COLUMNS)), _md(["---"] * len(METRIC_COLUMNS))]
    out += [_md(_metric_cells(s, m)) for s in results for m in s.metrics]
    for series in results:
        out += ["", f"### {describe_group(series.group)}: inclusive cost moved most", "",
                _md(list(MOVED_COLUMNS)), _md(["---"] * len(MOVED_COLUMNS))]
        out += [_md(moved_cells(f)) for f in series.moved]
    out += ["", NOTE.format(min_effect=min_effect)]
    return "\n".join(out) + "\n"


def run_table(rows: list[Row]) -> Table | None:
    """`kvperf run`: instructions per request of every trial (None in timing mode)."""
    counted = [r for r in rows if r.get("instructions")]
    if not counted:
        return None
    table = Table(title="instructions (measure stage)")
    for name in ("command", "P", "run", "instructions/request", "function",
                 "inclusive/call", "profile"):
        table.add_column(name)
    for row in counted:
        ins = row.get("instructions") or {}
        files = ins.get("callgrind_files") or []
        shown = files[0] + (f" (+{len(files) - 1} nodes)" if len(files) > 1 else "") \
            if files else "-"
        table.add_row(str(row["command"]), str(row["pipeline"]), str(row["run"]),
                      f"{ins.get('total_per_request') or 0:,.1f}", str(ins.get("function")),
                      f"{ins.get('command_per_call') or 0:,.1f}", shown)
    return table
