"""Change points as a terminal table and as JSON (``kvperf regressions``), and why some
histories were not checked."""

from __future__ import annotations

import math

from rich.table import Table

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import Finding
from kvperf.analysis.unstable import Unstable
from kvperf.core.jsontypes import JsonObject
from kvperf.results.row import KEY_FIELDS, SeriesParams
from kvperf.store.series import History

SHORT = {"data_size": "size", "pipeline": "P", "clients": "c", "io_threads": "io",
         "cluster_mode": "cluster", "benchmark_threads": "threads"}


def describe_params(params: SeriesParams) -> str:
    """``SET size=64 P=16 c=50 …``: the series' parameters that are set, compactly."""
    parts = [str(params.get("command") or "?")]
    for key in KEY_FIELDS[1:]:
        value = params.get(key)
        if value is None or value is False:
            continue
        parts.append(SHORT.get(key, key) if value is True else f"{SHORT.get(key, key)}={value}")
    return " ".join(parts)


def _value(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def findings_table(findings: list[Finding]) -> Table:
    """One row per change point: series, metric, direction, magnitude, means, commit range."""
    table = Table("series", "metric", "change", "magnitude", "before → after", "p",
                  "commits (last before..first after)", "first after at")
    for f in findings:
        colour = "red" if f.direction == "regression" else "green"
        mag = f"{f.magnitude * 100:+.1f}%" if math.isfinite(f.magnitude) else "n/a"
        table.add_row(describe_params(f.params), f.metric, f"[{colour}]{f.direction}[/{colour}]",
                      mag, f"{_value(f.before_mean)} → {_value(f.after_mean)}",
                      f"{f.pvalue:.1e}", f.commit_range,
                      f.first_after.at.isoformat(timespec="minutes"))
    return table


def finding_json(f: Finding) -> JsonObject:
    """A finding as a JSON-ready dict (full shas, ISO times)."""
    return {"series_key": f.series_key, "params": f.params, "metric": f.metric,
            "direction": f.direction,
            "magnitude": f.magnitude if math.isfinite(f.magnitude) else None,
            "pvalue": f.pvalue, "before_mean": f.before_mean, "after_mean": f.after_mean,
            "last_before": {"sha": f.last_before.sha, "at": f.last_before.at.isoformat()},
            "first_after": {"sha": f.first_after.sha, "at": f.first_after.at.isoformat()}}


def unstable_table(found: list[Unstable]) -> Table:
    """One row per unstable series: its noise against its minimum effect, and where the
    noise came from."""
    table = Table("series", "metric", "noise (A/A sd)", "min effect", "noise ÷ min effect",
                  "from", title="unstable series: A/A noise above the minimum effect")
    for u in found:
        source = f"{u.source} ({u.pairs} pairs)" if u.source == "history" else u.source
        table.add_row(describe_params(u.params), u.metric, f"{u.noise:.1%}",
                      f"{u.min_effect:.1%}", f"{u.noise / u.min_effect:.1f}×", source)
    return table


def unstable_json(u: Unstable) -> JsonObject:
    return {"series_key": u.series_key, "params": u.params, "metric": u.metric,
            "noise": u.noise, "min_effect": u.min_effect, "source": u.source,
            "pairs": u.pairs}


def left_out_note(left_out: int, unstable: int) -> str | None:
    """How many change points the unstable series hid, and how to see them."""
    if not left_out:
        return None
    return (f"{left_out} change point(s) on {unstable} unstable series left out (their A/A "
            "noise exceeds the minimum effect): --unstable lists the series, "
            "--include-unstable their change points")


def unchecked_note(every: list[History], checked: list[History], where: str) -> str | None:
    """Why histories were not checked: none stored, or too few revisions."""
    if not every:
        return (f"no history in {where} for these metrics and filters: record results with "
                "`kvperf run` (with --commit, one revision per commit) first")
    short = len(every) - len(checked)
    if not short:
        return None
    most = max(len(h.means) for h in every if len(h.means) < 2 * MIN_SEGMENT)
    return (f"{short} histories not checked: fewer than {2 * MIN_SEGMENT} revisions (the "
            f"longest has {most}); a change point needs {MIN_SEGMENT} revisions on each side")
