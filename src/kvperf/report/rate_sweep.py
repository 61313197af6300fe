"""Rate sweeps shown (analysis/rate_curve.py): per swept series a terminal table — target
and achieved rps, p50/p99/p99.9 of service and corrected latency, the knee marked — the knee
in a sentence, the same as markdown, and an SVG chart of p50/p99/p99.9 against achieved
rps (corrected solid, service dashed, the knee a dashed vertical) for the HTML report; two
sides' knees compared (compare --rate-sweep)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.knee import CurvePoint
from kvperf.analysis.rate_curve import Curve, KneeComparison
from kvperf.report import svg
from kvperf.report.comparison import verdict_text

KNEE_MARK = "◀ knee"
PERCENTILES = (("p50", "p50"), ("p99", "p99"), ("p99.9", "p99_9"))
HEADER = ("point", "target rps", "achieved rps",
          *(f"{name} svc ms" for name, _ in PERCENTILES),
          *(f"{name} corr ms" for name, _ in PERCENTILES), "")


SATURATED_MARK = "⚠ client"
SATURATED_NOTE = ("⚠ client: kvload used ≥ 90% of its CPU at these points; their corrected "
                  "latency includes its own late sends (give it a core of its own, or more "
                  "benchmark-threads)")


def cells(curve: Curve, i: int, p: CurvePoint) -> list[str]:
    mark = KNEE_MARK if curve.knee.index == i else ("✗" if curve.knee.breaks[i] else "")
    mark = f"{mark} {SATURATED_MARK}".strip() if p.client_saturated else mark
    return [p.label, f"{p.target_rps:,.0f}", f"{p.achieved_rps:,.0f}",
            *(f"{p.service[key]:.3f}" for _, key in PERCENTILES),
            *(f"{p.corrected[key]:.3f}" for _, key in PERCENTILES), mark]


def knee_text(curve: Curve) -> str:
    """The knee in one sentence: rate, share of saturation, the rule's reason, rounds."""
    saturation = (sum(curve.saturation) / len(curve.saturation)) if curve.saturation else None
    sat = f"closed-loop saturation {saturation:,.0f} rps" if saturation else "no saturation"
    point = curve.knee.point(curve.points)
    if point is None:
        head = "knee: below the lowest rate"
    else:
        share = (f" ({point.achieved_rps / saturation:.0%} of saturation)"
                 if saturation and point.percent is None else "")
        beyond = "≥ " if not curve.knee.reached else ""
        head = f"knee: {beyond}{point.achieved_rps:,.0f} rps at {point.label}{share}"
    interval = curve.interval
    rounds = ""
    if interval is not None and len(interval.values) > 1:
        rounds = (f"; over {len(interval.values)} rounds {interval.mean:,.0f} rps, 95% CI "
                  f"{interval.low:,.0f}–{interval.high:,.0f}")
    note = f". {SATURATED_NOTE}" if any(p.client_saturated for p in curve.points) else ""
    return f"{head}; {sat}; {curve.knee.reason}{rounds}{note}"


def curve_table(curve: Curve) -> Table:
    """One swept series' points, the knee marked (✗: a point that broke the rule)."""
    table = Table(title=f"Rate sweep · {curve.series} · {curve.arrivals} arrivals",
                  caption=knee_text(curve), caption_justify="left")
    for name in HEADER:
        table.add_column(name, justify="left" if name in ("point", "") else "right")
    for i, p in enumerate(curve.points):
        table.add_row(*(escape(c) for c in cells(curve, i, p)),
                      style="bold" if curve.knee.index == i else None)
    return table


def markdown(curves: Sequence[Curve], title: str) -> str:
    """Every curve as a markdown table with its knee sentence (a PR comment, a file)."""
    out = [f"## Rate sweep: {title}", ""]
    for curve in curves:
        out += [f"### {curve.series} ({curve.arrivals} arrivals)", "",
                "| " + " | ".join(h or "knee" for h in HEADER) + " |",
                "|" + "|".join("---" if i in (0, len(HEADER) - 1) else "---:"
                               for i in range(len(HEADER))) + "|"]
        out += ["| " + " | ".join(cells(curve, i, p)) + " |"
                for i, p in enumerate(curve.points)]
        out += ["", knee_text(curve), ""]
    return "\n".join(out)


def chart(curve: Curve, side: str | None = None) -> str:
    """p50/p99/p99.9 (corrected solid, service dashed) against achieved rps, the knee
    marked."""
    lines = []
    for i, (name, key) in enumerate(PERCENTILES):
        for kind, dashed in (("corrected", False), ("service", True)):
            points = [(p.achieved_rps, getattr(p, kind)[key]) for p in curve.points
                      if math.isfinite(getattr(p, kind)[key])]
            lines.append(svg.Line(f"{name} {kind}", points, svg.colour(i), dashed))
    point = curve.knee.point(curve.points)
    mark = (point.achieved_rps, f"knee {point.label}") if point else None
    title = f"{side + ': ' if side else ''}{curve.series} — latency vs throughput"
    return svg.rate_chart(lines, title, "achieved requests/s", "ms", mark)


def _knee_of(curve: Curve) -> str:
    """Mean knee rps over rounds with its 95% interval (or the one round's)."""
    interval = curve.interval
    if interval is None:
        return "below the lowest rate"
    if len(interval.values) < 2:
        return f"{interval.mean:,.0f}"
    return f"{interval.mean:,.0f} ({interval.low:,.0f}–{interval.high:,.0f})"


def _ratio(c: KneeComparison) -> str:
    r = c.ratio
    if math.isnan(r.low):
        return f"{r.ratio:.3f}"
    return f"{r.ratio:.3f} ({r.low:.3f}–{r.high:.3f})"


def knee_rows(found: Sequence[KneeComparison]) -> list[list[str]]:
    return [[c.series, _knee_of(c.base), _knee_of(c.new), _ratio(c),
             verdict_text(c.decision)] for c in found]


def knee_table(found: Sequence[KneeComparison], base: str, new: str) -> Table:
    """Per swept series: each side's knee rps (mean, 95% CI over rounds), B/A with its
    paired interval and the verdict."""
    table = Table(title=f"Rate sweep knees: {new} vs {base} (knee rps, paired by round)")
    for name in ("series", f"A knee rps ({base})", f"B knee rps ({new})", "B/A (95% CI)",
                 "verdict"):
        table.add_column(name, justify="left" if name in ("series", "verdict") else "right")
    for row in knee_rows(found):
        table.add_row(*(escape(c) for c in row))
    return table


def knee_markdown(found: Sequence[KneeComparison], base: str, new: str) -> str:
    head = ["series", f"A knee rps ({base})", f"B knee rps ({new})", "B/A (95% CI)",
            "verdict"]
    lines = [f"## Rate sweep knees: {new} vs {base}", "", "| " + " | ".join(head) + " |",
             "|---|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in knee_rows(found)]
    return "\n".join(lines) + "\n"
