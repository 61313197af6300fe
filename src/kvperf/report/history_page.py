"""`kvperf report --history`: the stored history as one self-contained HTML page (and its
numbers as versioned JSON): per series and metric, one value per commit (the mean of its
trials, oldest first) with the change points `kvperf regressions` finds marked between the
two commits they separate — red for a regression, green for an improvement — and a table of
them with their commit ranges (what `kvperf bisect` takes) and their alerts' states. Commits
where the machine's environment changed (analysis/envdiff.py) are marked in grey, and a
change point at one is labelled "environment changed: …". Pure: the pipeline gives the
histories and findings.

JSON versions (``kvperf_history_report``): 1 — first version; 2 — adds
``environment_changes`` per history (the first commit of each new environment and the
facts that changed), and on each change point ``environment`` (the label, or null) and
``alert`` (its alert's id and state, or null)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from kvperf import __version__
from kvperf.analysis.envdiff import EnvChange
from kvperf.core.jsontypes import JsonObject
from kvperf.report import svg
from kvperf.report.html import STYLE, VERDICT_COLOUR

HISTORY_REPORT_VERSION = 2
ENV_COLOUR = "#9467bd"
UNITS = {"rps": "rps"}  # else the metric name's own unit (ms, µs …)


@dataclass(frozen=True)
class ChangeMark:
    """A change point of a panel: the index of the first commit of the new regime."""

    index: int
    direction: str  # "regression" | "improvement"
    magnitude: float
    pvalue: float
    commit_range: str
    environment: str | None = None  # "environment changed: …" when one coincides
    alert: str = ""  # its alert's id and state (kvperf alerts), when recorded


@dataclass(frozen=True)
class HistoryPanel:
    """One metric of one series over commits."""

    series: str
    metric: str
    revisions: tuple[str, ...]
    times: tuple[str, ...]  # ISO times (commit time, else the first trial's)
    values: tuple[float, ...]
    counts: tuple[int, ...]
    changes: tuple[ChangeMark, ...]
    env_changes: tuple[EnvChange, ...] = ()


def _unit(metric: str) -> str:
    if metric in UNITS:
        return UNITS[metric]
    return "ms" if metric.endswith("_ms") else "µs" if metric.endswith("_us") else ""


def _chart(panel: HistoryPanel) -> str:
    steps = [svg.Step(c.index, VERDICT_COLOUR[c.direction],
                      f"{c.magnitude:+.1%} {c.direction}") for c in panel.changes]
    steps += [svg.Step(e.index, ENV_COLOUR, e.label) for e in panel.env_changes]
    return svg.history_chart(panel.values, [r[:8] for r in panel.revisions], steps,
                             f"{panel.series} · {panel.metric}", _unit(panel.metric))


def _changes_table(panels: Sequence[HistoryPanel]) -> str:
    rows = [(p, c) for p in panels for c in p.changes]
    if not rows:
        return "<p>No change points: every history is one regime at this significance.</p>"
    head = "".join(f"<th>{h}</th>" for h in ("series", "metric", "direction", "change",
                                             "p", "commits (last old..first new)",
                                             "alert"))
    body = "".join(
        f"<tr><td>{escape(p.series)}</td><td>{escape(p.metric)}</td>"
        f'<td><span class="verdict" style="background:{VERDICT_COLOUR[c.direction]}">'
        f"{escape(c.direction)}</span></td><td class=\"num\">{c.magnitude:+.2%}</td>"
        f'<td class="num">{c.pvalue:.2g}</td><td><code>{escape(c.commit_range)}</code>'
        f"{_environment(c)}</td><td>{escape(c.alert or 'none')}</td></tr>" for p, c in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _environment(change: ChangeMark) -> str:
    return (f'<div class="warn">{escape(change.environment)}</div>' if change.environment
            else "")


def _env_list(panels: Sequence[HistoryPanel]) -> str:
    """Each commit where the environment changed, once (panels share commits)."""
    seen = dict.fromkeys((p.revisions[e.index], e.label) for p in panels
                         for e in p.env_changes)
    if not seen:
        return ""
    items = "".join(f"<li><code>{escape(rev[:12])}</code>: {escape(label)}</li>"
                    for rev, label in seen)
    return f"<h2>Environment changes</h2><ul>{items}</ul>"


def render_history(panels: Sequence[HistoryPanel], source: str, note: str | None) -> str:
    """The whole page: the change-point table, then one chart per series and metric."""
    title = f"kvperf history: {source}"
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p>{len(panels)} series×metric histories, "
             f"{sum(len(p.changes) for p in panels)} change point(s).</p>"]
    if note:
        parts.append(f'<div class="warn">{escape(note)}</div>')
    parts += ["<h2>Change points</h2>", _changes_table(panels), _env_list(panels),
              "<h2>Histories</h2>"]
    parts += [_chart(p) for p in panels]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style></head><body>{''.join(parts)}"
            f"<footer>kvperf {escape(__version__)} · history report format "
            f"{HISTORY_REPORT_VERSION}</footer></body></html>\n")


def history_json(panels: Sequence[HistoryPanel], source: str) -> JsonObject:
    """The page's numbers (format ``kvperf_history_report``, versioned)."""
    return {"kvperf_history_report": HISTORY_REPORT_VERSION, "source": source,
            "histories": [{
                "series": p.series, "metric": p.metric,
                "points": [{"revision": r, "time": t, "value": v, "trials": n}
                           for r, t, v, n in zip(p.revisions, p.times, p.values, p.counts,
                                                 strict=True)],
                "change_points": [{"first_new": p.revisions[c.index],
                                   "direction": c.direction, "magnitude": c.magnitude,
                                   "pvalue": c.pvalue, "commits": c.commit_range,
                                   "environment": c.environment,
                                   "alert": c.alert or None}
                                  for c in p.changes],
                "environment_changes": [{"first_new": p.revisions[e.index],
                                         "facts": {f.fact: list(f.values) for f in e.facts}}
                                        for e in p.env_changes]} for p in panels]}

