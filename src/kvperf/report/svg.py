"""Chart primitives as inline SVG text (no scripts, no fonts, no network): a dot chart with
run-to-run spread, a line chart on log axes, a forest plot of ratios, and a line chart over
categories (sweeps).

Every function returns one ``<svg>`` element; every text is escaped here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
WIDTH = 960
LEFT = 240  # room for series labels
RIGHT = 30
ROW = 22
FOREST_LEFT = 400  # a forest row's label: series and metric


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass(frozen=True)
class Scale:
    """Domain [lo, hi] → pixels [a, b], linear or log10."""

    lo: float
    hi: float
    a: float
    b: float
    log: bool = False

    def __call__(self, v: float) -> float:
        lo, hi, v = ((math.log10(self.lo), math.log10(self.hi), math.log10(max(v, self.lo)))
                     if self.log else (self.lo, self.hi, v))
        span = hi - lo or 1.0
        return self.a + (v - lo) / span * (self.b - self.a)


def _svg(height: float, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" '
            f'width="{WIDTH}" height="{height:.0f}" role="img" class="chart">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg>")


def _text(x: float, y: float, s: str, anchor: str = "start", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{klass}>'
            f"{escape(s)}</text>")


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#999",
          extra: str = "") -> str:
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}" {extra}/>')


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (linear)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 5, 10) if raw <= m * step)
    first = math.floor(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 2)
            if first + i * step <= hi * 1.0001]


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:.3g}"


@dataclass(frozen=True)
class Dots:
    """One row of a dot chart: a label, its runs' values, the colour of its side."""

    label: str
    values: Sequence[float]
    colour: str


def dot_chart(rows: Sequence[Dots], unit: str, title: str) -> str:
    """Per row: a bar to the median, a whisker min–max, one dot per run."""
    values = [v for r in rows for v in r.values]
    top = max(values, default=1.0) * 1.05 or 1.0
    height = 40 + ROW * len(rows) + 30
    x = Scale(0.0, top, LEFT, WIDTH - RIGHT)
    body = [_text(LEFT, 16, f"{title} ({unit})", cls="ctitle")]
    for tick in nice_ticks(0.0, top):
        body += [_line(x(tick), 26, x(tick), height - 28, "#e5e5e5"),
                 _text(x(tick), height - 12, _fmt(tick), "middle", "tick")]
    for i, row in enumerate(rows):
        y = 36 + ROW * i + ROW / 2
        body.append(_text(LEFT - 8, y + 4, row.label, "end", "label"))
        if not row.values:
            continue
        median = statistics.median(row.values)
        body.append(f'<rect x="{LEFT}" y="{y - 6:.1f}" width="{x(median) - LEFT:.1f}" '
                    f'height="12" fill="{row.colour}" fill-opacity="0.25">'
                    f"<title>{escape(row.label)}: median {median:,.3f} {escape(unit)}"
                    "</title></rect>")
        body.append(_line(x(min(row.values)), y, x(max(row.values)), y, row.colour,
                          'stroke-width="1.5"'))
        body += [f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="3.5" fill="{row.colour}">'
                 f"<title>{v:,.3f}</title></circle>" for v in row.values]
    return _svg(height, title, body)


@dataclass(frozen=True)
class Line:
    """One line of a line chart: name, points (x, y), colour, dashed or not."""

    name: str
    points: Sequence[tuple[float, float]]
    colour: str
    dashed: bool = False


def line_chart(lines: Sequence[Line], title: str, x_ticks: Sequence[tuple[float, str]],
               y_unit: str) -> str:
    """Lines on a log x axis (ticks given) and a log y axis."""
    xs = [p[0] for ln in lines for p in ln.points]
    ys = [p[1] for ln in lines for p in ln.points if p[1] > 0]
    height, bottom = 300, 250
    x = Scale(min(xs, default=1.0), max(xs, default=10.0), 70, WIDTH - RIGHT - 150, log=True)
    y_lo, y_hi = _decades(min(ys, default=0.01), max(ys, default=1.0))
    y = Scale(y_lo, y_hi, bottom, 30, log=True)
    body = [_text(70, 16, title, cls="ctitle")]
    for value, label in x_ticks:
        body += [_line(x(value), 30, x(value), bottom, "#e5e5e5"),
                 _text(x(value), bottom + 16, label, "middle", "tick")]
    for exp in range(round(math.log10(y_lo)), round(math.log10(y_hi)) + 1):
        body += [_line(70, y(10.0 ** exp), x.b, y(10.0 ** exp), "#e5e5e5"),
                 _text(64, y(10.0 ** exp) + 4, f"{_fmt(10.0 ** exp)} {y_unit}", "end", "tick")]
    body.append(_text((70 + x.b) / 2, bottom + 36, "percentile (axis: 1/(1−q), log)",
                      "middle", "tick"))
    for i, ln in enumerate(lines):
        path = " ".join(f"{x(px):.1f},{y(max(py, y_lo)):.1f}" for px, py in ln.points)
        dash = ' stroke-dasharray="6 4"' if ln.dashed else ""
        body.append(f'<polyline points="{path}" fill="none" stroke="{ln.colour}" '
                    f'stroke-width="2"{dash}><title>{escape(ln.name)}</title></polyline>')
        ly = 40 + 18 * i
        body += [_line(x.b + 12, ly, x.b + 36, ly, ln.colour,
                       f'stroke-width="2"{dash}'),
                 _text(x.b + 40, ly + 4, ln.name, cls="label")]
    return _svg(height, title, body)


def _decades(lo: float, hi: float) -> tuple[float, float]:
    lo_exp = math.floor(math.log10(lo))
    hi_exp = math.ceil(math.log10(hi))
    return 10.0 ** lo_exp, 10.0 ** max(hi_exp, lo_exp + 1)


@dataclass(frozen=True)
class Interval:
    """One row of a forest plot: label, ratio and its 95% CI (NaN: none), colour."""

    label: str
    ratio: float
    low: float
    high: float
    colour: str
    note: str


def forest_plot(rows: Sequence[Interval], title: str) -> str:
    """Ratios with their CIs on a log axis, a line at 1 (no change)."""
    ends = [v for r in rows for v in (r.ratio, r.low, r.high) if v > 0 and math.isfinite(v)]
    spread = max((abs(math.log(v)) for v in ends), default=0.05)
    half = max(spread * 1.15, math.log(1.05))
    x = Scale(math.exp(-half), math.exp(half), FOREST_LEFT + 10, WIDTH - RIGHT, log=True)
    height = 40 + ROW * len(rows) + 30
    body = [_text(FOREST_LEFT, 16, title, cls="ctitle")]
    for tick in _ratio_ticks(math.exp(-half), math.exp(half)):
        body += [_line(x(tick), 26, x(tick), height - 28,
                       "#444" if tick == 1 else "#e5e5e5"),
                 _text(x(tick), height - 12, f"{tick:g}", "middle", "tick")]
    for i, r in enumerate(rows):
        y = 36 + ROW * i + ROW / 2
        body.append(_text(FOREST_LEFT, y + 4, r.label, "end", "label"))
        if math.isfinite(r.low) and math.isfinite(r.high):
            body.append(_line(x(r.low), y, x(r.high), y, r.colour, 'stroke-width="2"'))
        if r.ratio > 0 and math.isfinite(r.ratio):
            body.append(f'<rect x="{x(r.ratio) - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                        f'fill="{r.colour}"><title>{escape(r.note)}</title></rect>')
    return _svg(height, title, body)


def _ratio_ticks(lo: float, hi: float) -> list[float]:
    candidates = (0.25, 0.5, 0.8, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.25, 2.0, 4.0)
    ticks = [t for t in candidates if lo <= t <= hi]
    return ticks if len(ticks) >= 3 else [round(lo, 3), 1.0, round(hi, 3)]


def category_chart(lines: Sequence[Line], title: str, categories: Sequence[str],
                   x_label: str, y_unit: str) -> str:
    """Lines over evenly spaced categories (a point's x is its category's index) on a linear
    y axis from 0: a swept parameter's values against a metric, one line per series."""
    ys = [p[1] for ln in lines for p in ln.points]
    height, bottom = 300, 250
    x = Scale(0.0, max(len(categories) - 1, 1), 90, WIDTH - RIGHT - 230)
    top = max(ys, default=1.0) * 1.08 or 1.0
    y = Scale(0.0, top, bottom, 30)
    body = [_text(90, 16, title, cls="ctitle")]
    for i, name in enumerate(categories):
        body += [_line(x(i), 30, x(i), bottom, "#e5e5e5"),
                 _text(x(i), bottom + 16, name, "middle", "tick")]
    for tick in nice_ticks(0.0, top):
        body += [_line(90, y(tick), x.b, y(tick), "#e5e5e5"),
                 _text(84, y(tick) + 4, f"{_fmt(tick)} {y_unit}", "end", "tick")]
    body.append(_text((90 + x.b) / 2, bottom + 36, x_label, "middle", "tick"))
    for i, ln in enumerate(lines):
        path = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py in ln.points)
        body.append(f'<polyline points="{path}" fill="none" stroke="{ln.colour}" '
                    f'stroke-width="2"><title>{escape(ln.name)}</title></polyline>')
        body += [f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="3" fill="{ln.colour}">'
                 f"<title>{escape(ln.name)}: {categories[int(px)]} → {py:,.3f}</title>"
                 "</circle>" for px, py in ln.points]
        ly = 40 + 16 * i
        body += [_line(x.b + 12, ly, x.b + 36, ly, ln.colour, 'stroke-width="2"'),
                 _text(x.b + 40, ly + 4, ln.name, cls="label")]
    return _svg(max(height, 40 + 16 * len(lines)), title, body)


@dataclass(frozen=True)
class Step:
    """A change point on a history chart: before point ``index``, coloured, labelled."""

    index: int
    colour: str
    label: str


def history_chart(values: Sequence[float], labels: Sequence[str], steps: Sequence[Step],
                  title: str, unit: str) -> str:
    """One value per commit (oldest first) on a linear y axis, commits as x, change points
    as dashed verticals between the two commits they separate."""
    height, bottom, left = 260, 200, 90
    x = Scale(0, max(len(values) - 1, 1), left, WIDTH - RIGHT)
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    pad = (hi - lo) * 0.1 or abs(hi) * 0.05 or 1.0
    y = Scale(lo - pad, hi + pad, bottom, 30)
    body = [_text(left, 16, title, cls="ctitle")]
    for tick in (t for t in nice_ticks(lo - pad, hi + pad) if t >= lo - pad):
        body += [_line(left, y(tick), x.b, y(tick), "#e5e5e5"),
                 _text(left - 6, y(tick) + 4, f"{_fmt(tick)} {unit}", "end", "tick")]
    every = max(1, math.ceil(len(labels) / 12))
    for i, label in enumerate(labels):
        if i % every == 0 or i == len(labels) - 1:
            body.append(_text(x(i), bottom + 16, label, "middle", "tick"))
    for step in steps:
        sx = (x(step.index - 1) + x(step.index)) / 2
        body += [_line(sx, 30, sx, bottom, step.colour,
                       'stroke-width="2" stroke-dasharray="5 3"'),
                 _text(sx + 4, 42, step.label, cls="label")]
    path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    body.append(f'<polyline points="{path}" fill="none" stroke="{PALETTE[0]}" '
                f'stroke-width="2"/>')
    body += [f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{PALETTE[0]}">'
             f"<title>{escape(labels[i])}: {escape(_fmt(v))} {escape(unit)}</title></circle>"
             for i, v in enumerate(values)]
    body.append(_text((left + x.b) / 2, bottom + 36, "commit (oldest first)", "middle",
                      "tick"))
    return _svg(height, title, body)


def rate_chart(lines: Sequence[Line], title: str, x_unit: str, y_unit: str,
               mark: tuple[float, str] | None = None) -> str:
    """Lines over a linear x axis from 0 (a rate) and a log y axis (latency), a dot per
    point; ``mark``: a dashed vertical at an x with its label (a knee)."""
    xs = [p[0] for ln in lines for p in ln.points]
    ys = [p[1] for ln in lines for p in ln.points if p[1] > 0]
    height, bottom, left = 320, 260, 90
    x = Scale(0.0, max(xs, default=1.0) * 1.05 or 1.0, left, WIDTH - RIGHT - 200)
    y_lo, y_hi = _decades(min(ys, default=0.01), max(ys, default=1.0))
    y = Scale(y_lo, y_hi, bottom, 30, log=True)
    body = [_text(left, 16, title, cls="ctitle")]
    for tick in nice_ticks(0.0, x.hi):
        body += [_line(x(tick), 30, x(tick), bottom, "#e5e5e5"),
                 _text(x(tick), bottom + 16, _fmt(tick), "middle", "tick")]
    for exp in range(round(math.log10(y_lo)), round(math.log10(y_hi)) + 1):
        body += [_line(left, y(10.0 ** exp), x.b, y(10.0 ** exp), "#e5e5e5"),
                 _text(left - 6, y(10.0 ** exp) + 4, f"{_fmt(10.0 ** exp)} {y_unit}", "end",
                       "tick")]
    body.append(_text((left + x.b) / 2, bottom + 36, x_unit, "middle", "tick"))
    if mark is not None:
        body += [_line(x(mark[0]), 30, x(mark[0]), bottom, "#444",
                       'stroke-dasharray="3 3" stroke-width="1.5"'),
                 _text(x(mark[0]) + 4, 42, mark[1], cls="label")]
    for i, ln in enumerate(lines):
        path = " ".join(f"{x(px):.1f},{y(max(py, y_lo)):.1f}" for px, py in ln.points)
        dash = ' stroke-dasharray="6 4"' if ln.dashed else ""
        body.append(f'<polyline points="{path}" fill="none" stroke="{ln.colour}" '
                    f'stroke-width="2"{dash}><title>{escape(ln.name)}</title></polyline>')
        body += [f'<circle cx="{x(px):.1f}" cy="{y(max(py, y_lo)):.1f}" r="2.5" '
                 f'fill="{ln.colour}"><title>{escape(ln.name)}: {px:,.0f} → {py:,.3f} '
                 f"{escape(y_unit)}</title></circle>" for px, py in ln.points]
        ly = 40 + 16 * i
        body += [_line(x.b + 12, ly, x.b + 36, ly, ln.colour, f'stroke-width="2"{dash}'),
                 _text(x.b + 40, ly + 4, ln.name, cls="label")]
    return _svg(height, title, body)
