"""The report as one self-contained HTML page: styles inline, charts inline SVG
(``report/svg.py``), no scripts, fonts or requests — it opens offline, from a file or a CI
artifact.

Sections: run summary with provenance and noise warnings per side; for two sides or more,
the comparisons, then what differs between their environments (report/envdiff.py);
throughput and latency per series (dot charts with run-to-run spread); the latency
percentile spectrum of the merged HDR histograms (corrected vs service, p0 … p99.999 on a
log "1/(1−q)" axis); for two sides, the A/B forest plot of ratios with 95% CIs coloured by
verdict, and its table; per swept key (a series field the run gave several values) rps and
p99 against its values, one line per other series; the trials other processes disturbed,
each marked (⚠) with its cause; client libraries (``--client``): rps per run and a table per
client and workload with the rps 95% interval, p99, CPU per operation and the ratios to
kvload; per rate-swept series its latency-vs-throughput chart and knee."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from kvperf import __version__
from kvperf.analysis.clients import ClientLine
from kvperf.report import svg
from kvperf.report.clients import NOTE, calls_per_read
from kvperf.report.envdiff import html_block
from kvperf.report.model import (
    Artifact,
    Comparison,
    DisturbedTrial,
    KneeRow,
    Report,
    SeriesStats,
    SideCurve,
    SideSweep,
    SourceSummary,
    Spectrum,
)
from kvperf.report.profile import EXCLUDED_NOTE
from kvperf.report.rate_sweep import HEADER as RATE_HEADER
from kvperf.report.rate_sweep import cells as rate_cells
from kvperf.report.rate_sweep import chart as rate_chart
from kvperf.report.rate_sweep import knee_text

VERDICT_COLOUR = {"regression": "#d62728", "improvement": "#2ca02c", "no change": "#7f7f7f",
                  "inconclusive": "#bcbd22", "unstable": "#ff7f0e",
                  "insufficient data": "#c7c7c7", "not comparable": "#333333"}
SPECTRUM_TICKS = ((1.0, "p0"), (2.0, "p50"), (10.0, "p90"), (100.0, "p99"),
                  (1e3, "p99.9"), (1e4, "p99.99"), (1e5, "p99.999"))

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1000px;color:#222;background:#fff;padding:0 16px}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:4px;
margin-top:2em}h3{font-size:1em}
table{border-collapse:collapse;margin:8px 0;font-size:.85em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.warn{background:#fff4e0;border-left:4px solid #ff7f0e;padding:6px 10px;margin:6px 0}
.ok{color:#2ca02c}.hint{color:#666}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}
svg text{font-size:11px;fill:#333}svg .ctitle{font-size:13px;font-weight:600}
svg .tick{fill:#666}
.verdict{padding:1px 6px;border-radius:3px;color:#fff}
footer{margin-top:3em;color:#888;font-size:.8em}
"""


def render(report: Report) -> str:
    """The whole page."""
    sides = [s.name for s in report.sources]
    title = ("kvperf report: " + " vs ".join(reversed(sides)) if report.comparison
             else f"kvperf report: {sides[0]}")
    parts = [f"<h1>{escape(title)}</h1>", _summary(report.sources)]
    for compared in report.comparisons:
        parts.append(_comparison(compared, len(report.comparisons) == 1))
    if report.environment is not None:
        parts.append(html_block(report.environment))
    parts += [_series(report.series, sides), _spectra(report.spectra, sides)]
    if report.disturbed:
        parts.append(_disturbed(report.disturbed))
    if report.clients:
        parts.append(_clients(report.clients))
    if report.sweeps:
        parts.append(_sweeps(report.sweeps, len(sides) > 1))
    if report.rate_sweeps:
        parts.append(_rate_sweeps(report.rate_sweeps, len(sides) > 1))
    if report.knees:
        parts.append(_knees(report.knees))
    if report.artifacts:
        parts.append(_artifacts(report.artifacts))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style></head><body>{''.join(parts)}"
            f"<footer>kvperf {escape(__version__)} · report format "
            f"{report.version}</footer></body></html>\n")


MARK = "⚠"


def _disturbed(trials: Sequence[DisturbedTrial]) -> str:
    """A line per disturbed trial: its mark, side, series, run, share and cause."""
    rows = [[f'<span title="disturbed">{MARK}</span>', escape(t.side), escape(t.series),
             "–" if t.run is None else str(t.run), f"{t.foreign_share:.0%}", escape(t.cause),
             "excluded" if t.excluded else "kept",
             "rerun" if t.attempt > 1 else ""] for t in trials]
    return ("<h2>Disturbed trials</h2><p>Other processes (or the hypervisor) took the "
            "watched CPUs during these trials' measure stage: their numbers may be of a "
            "busy machine, not of the server. Quiet the machine, pin elsewhere or rerun.</p>"
            + _table(("", "side", "series", "run", "foreign CPU", "cause", "statistics",
                      "attempt"), rows, numeric=(3, 4)))


def _clients(lines: Sequence[ClientLine]) -> str:
    """Client libraries: rps per run (a dot per run) and the table, kvload's line the
    reference of its workload's ratios."""
    sides = list(dict.fromkeys(ln.side for ln in lines))
    multi = len(sides) > 1
    dots = [svg.Dots(f"{ln.workload} · {ln.client}" + (f" · {ln.side}" if multi else ""),
                     list(ln.rps_runs), svg.colour(sides.index(ln.side)))
            for ln in lines if ln.rps_runs]
    rows = [[escape(ln.workload), *([escape(ln.side or "")] if multi else []),
             escape(ln.client), str(ln.runs), f"{ln.rps:,.0f}",
             "–" if ln.rps_ci is None else f"{ln.rps_ci[0]:,.0f} – {ln.rps_ci[1]:,.0f}",
             _ratio(ln.rps_ratio), _ms(ln.p50_ms), _ms(ln.p99_ms), _ms(ln.p99_9_ms),
             escape(ln.latency or "–"), escape(calls_per_read(ln)),
             _num(ln.client_cpu_us, ",.2f"), _ratio(ln.cpu_ratio),
             _num(ln.process_cpu_us, ",.2f"), _num(ln.server_cpu_us, ",.2f"),
             _num(ln.rss_mib, ",.1f"), escape(ln.allocations)] for ln in lines]
    header = ["workload", *(["side"] if multi else []), "client", "runs", "rps (median)",
              "rps 95% CI", "× kvload", "p50 ms", "p99 ms", "p99.9 ms", "latency",
              "calls/read", "client CPU µs/op", "× kvload", "process CPU µs/op",
              "server CPU µs/op", "RSS MiB", "allocations/op"]
    first = 3 if multi else 2
    text = first + 7  # latency: words among the numbers
    return ("<h2>Client libraries</h2><p>Each client's harness on the same workloads "
            f"(docs/CLIENTS.md). {escape(NOTE)}</p>"
            + svg.dot_chart(dots, "requests/s", "Client throughput per run")
            + _table(header, rows, numeric=tuple(i for i in range(first, len(header) - 1)
                                                 if i != text)))


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def _artifacts(artifacts: Sequence[Artifact]) -> str:
    """The profile artifacts, each file a link (relative: the page opens beside them)."""
    rows = [[escape(a.side), escape(a.test), escape(a.profiler), escape(a.node),
             escape(a.artifact), f'<a href="{escape(a.file)}">{escape(a.file)}</a>']
            for a in artifacts]
    return ("<h2>Profile artifacts</h2>"
            f'<p class="hint">{escape(EXCLUDED_NOTE)}</p>'
            + _table(("side", "test", "profiler", "node", "artifact", "file"), rows))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()
           ) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _summary(sources: Sequence[SourceSummary]) -> str:
    keys = list(dict.fromkeys(k for s in sources for k, v in s.provenance.items()
                              if v is not None))
    rows = [[escape("server")] + [escape(s.label) for s in sources],
            [escape("rows (failed)")] + [f"{s.rows} ({s.failed})" for s in sources],
            [escape("path")] + [escape(s.path) for s in sources]]
    rows += [[escape(k)] + [escape(str(s.provenance.get(k) or "–")) for s in sources]
             for k in keys]
    out = ["<h2>Run summary</h2>",
           _table(["", *(s.name for s in sources)], rows)]
    for s in sources:
        if not s.warnings:
            out.append(f'<p class="ok">{escape(s.name)}: no noise warnings</p>')
        out += [f'<div class="warn"><b>{escape(s.name)}: {escape(w.kind)}</b> — '
                f'{escape(w.message)} <span class="hint">({escape(w.hint)})</span></div>'
                for w in s.warnings]
    return "".join(out)


def _series(series: Sequence[SeriesStats], sides: list[str]) -> str:
    if not series:
        return "<h2>Throughput and latency</h2><p>No ok trials to show.</p>"
    ordered = sorted(series, key=lambda s: (s.series, sides.index(s.side)))
    multi = len(sides) > 1

    def dots(values: str) -> list[svg.Dots]:
        return [svg.Dots(f"{s.series} · {s.side}" if multi else s.series,
                         getattr(s, values), svg.colour(sides.index(s.side))) for s in ordered]

    rows = [[escape(s.series) + _marks(s), escape(s.side), str(s.runs),
             f"{s.rps_median:,.0f}",
             _pct(s.rps_cv), *(_ms(s.latency_ms.get(k)) for k in ("p50", "p99", "p99_9")),
             escape(s.latency_source)] for s in ordered]
    return ("<h2>Throughput and latency</h2>"
            + svg.dot_chart(dots("rps"), "requests/s", "Throughput per run")
            + svg.dot_chart(dots("p99_ms"), "ms", "p99 latency per run")
            + svg.dot_chart(dots("p50_ms"), "ms", "p50 latency per run")
            + _table(["series", "side", "runs", "rps (median)", "rps CV", "p50 ms", "p99 ms",
                      "p99.9 ms", "latency from"], rows, numeric=(2, 3, 4, 5, 6, 7)))


def _marks(s: SeriesStats) -> str:
    """⚠ and the disturbed runs of a series (the Disturbed trials section says why)."""
    if not s.disturbed_runs:
        return ""
    runs = ", ".join(map(str, s.disturbed_runs))
    return f' <span title="disturbed runs">{MARK} run {runs}</span>'


def _pct(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.1%}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.3f}"


def _spectra(spectra: Sequence[Spectrum], sides: list[str]) -> str:
    out = ["<h2>Latency percentile spectrum</h2>"]
    if not spectra:
        return out[0] + ("<p>No HDR histograms in these results (kvload records them; "
                         "other tools report a few percentiles only).</p>")
    out.append("<p>From the HDR histograms of all runs merged (never averaged percentiles). "
               "Corrected: from each request's intended send time (coordinated omission "
               "corrected); service: from its actual send time (dashed); uncorrected: a "
               "closed-loop client harness's, from its call to its result.</p>")
    by_series: dict[str, list[Spectrum]] = {}
    for s in spectra:
        by_series.setdefault(s.series, []).append(s)
    for name, group in by_series.items():
        lines = []
        for s in group:
            xs = [1 / (1 - q / 100) for q in s.percentiles]
            c = svg.colour(sides.index(s.side))
            lines.append(svg.Line(f"{s.side} {s.latency}", list(zip(xs, s.corrected_ms,
                                                                  strict=True)), c))
            if s.service_ms:
                lines.append(svg.Line(f"{s.side} service",
                                      list(zip(xs, s.service_ms, strict=True)), c, True))
        runs = ", ".join(f"{s.side}: {s.runs} runs" for s in group)
        out.append(svg.line_chart(lines, f"{name} ({runs})", SPECTRUM_TICKS, "ms"))
    return "".join(out)


def _comparison(c: Comparison, ab: bool = True) -> str:
    how = ("interleaved rounds, paired by round (paired t on log ratios)" if c.paired
           else "independent runs (two-sample t on logs)")
    intervals = [svg.Interval(f"{r.series} · {r.metric}", r.ratio, r.low, r.high,
                              VERDICT_COLOUR.get(r.verdict, "#333"),
                              f"{r.ratio:.3f} {r.verdict} {r.reason}") for r in c.rows]
    rows = [[escape(r.series), escape(r.metric), f"{r.base_mean:,.3f}", f"{r.new_mean:,.3f}",
             f"{r.change:+.2%}", _ci(r.ratio, r.low, r.high),
             "–" if math.isnan(r.p_adjusted) else f"{r.p_adjusted:.2g}",
             f'<span class="verdict" style="background:{VERDICT_COLOUR.get(r.verdict)}">'
             f"{escape(r.verdict)}</span> {escape(r.reason)}"] for r in c.rows]
    legend = " ".join(f'<span class="verdict" style="background:{col}">{escape(v)}</span>'
                      for v, col in VERDICT_COLOUR.items())
    unmatched = (f"<p>Series on one side only: {escape(', '.join(c.unmatched))}</p>"
                 if c.unmatched else "")
    kind = "A/B comparison" if ab else "Comparison with the baseline"
    labels = (f" ({escape(c.new)}: {escape(c.new_label)}, {escape(c.base)}: "
              f"{escape(c.base_label)})" if c.new_label and c.new_label != c.new else "")
    corrected = "" if ab else " p-values corrected over every server's comparison."
    return (f"<h2>{kind}: {escape(c.new)} / {escape(c.base)}</h2>"
            f"<p>Ratios {escape(c.new)}/{escape(c.base)}{labels} with 95% CIs; {escape(how)}."
            f"{corrected} {legend}</p>"
            + (svg.forest_plot(intervals, "Ratio (log axis), 95% CI") if intervals else
               "<p>No series with ok rows on both sides.</p>")
            + _table(["series", "metric", c.base, c.new, "change", "ratio [95% CI]",
                      "p (adj.)", "verdict"], rows, numeric=(2, 3, 4, 5, 6)) + unmatched)


def _ci(ratio: float, low: float, high: float) -> str:
    if math.isnan(low):
        return f"{ratio:.3f}"
    return f"{ratio:.3f} [{low:.3f}, {high:.3f}]"


def _sweeps(found: Sequence[SideSweep], multi: bool) -> str:
    """Per side and swept key: rps and p99 against the key's values, a line per series."""
    out = ["<h2>Sweeps</h2><p>Each config key given several values; one line per series "
           "that differs only in it (means over runs; the table's speed-up is rps over the "
           "line's first value).</p>"]
    for item in found:
        sw = item.sweep
        name = f"{sw.label} ({sw.key})" + (f" · {item.side}" if multi else "")
        out.append(f"<h3>{escape(name)}</h3>")
        for metric, unit, title in (("rps", "", "requests/s"), ("p99_ms", "ms", "p99 latency")):
            lines = [svg.Line(ln.series, [(float(sw.values.index(p.value)), value)
                                          for p in ln.points
                                          for value in [getattr(p, metric)] if value is not None],
                              svg.colour(i)) for i, ln in enumerate(sw.lines)]
            out.append(svg.category_chart(lines, f"{title} against {sw.label}", sw.values,
                                          sw.label, unit))
        rows = [[escape(ln.series), escape(p.value), str(p.runs), _num(p.rps, ",.0f"),
                 _num(p.speedup, ".2f"), _num(p.p99_ms, ",.3f")]
                for ln in sw.lines for p in ln.points]
        out.append(_table(["series", sw.label, "runs", "rps", "speed-up", "p99 ms"], rows,
                          numeric=(2, 3, 4, 5)))
    return "".join(out)


def _rate_sweeps(found: Sequence[SideCurve], multi: bool) -> str:
    """Per side and swept series: p50/p99/p99.9 against achieved rps (corrected solid,
    service dashed), the knee marked, and the points' table."""
    out = ["<h2>Rate sweeps: latency vs throughput</h2><p>Per series its closed-loop rps "
           "(saturation), then open-loop points at shares of it; latency from each "
           "point's merged HDR histograms. Corrected latency counts from each request's "
           "intended send time (queueing in front of the server included), service "
           "latency from its actual send. The knee: the last point before the first "
           "confirmed break of the bound (docs/guide/sweeps.md, \"Rate sweeps\").</p>"]
    for item in found:
        curve = item.curve
        out.append(f"<h3>{escape(curve.series)}"
                   f"{escape(' · ' + item.side) if multi else ''}</h3>")
        out.append(rate_chart(curve, item.side if multi else None))
        rows = [[escape(c) for c in rate_cells(curve, i, p)]
                for i, p in enumerate(curve.points)]
        out.append(_table(RATE_HEADER, rows, numeric=tuple(range(1, len(RATE_HEADER) - 1))))
        out.append(f"<p>{escape(knee_text(curve))}</p>")
    return "".join(out)


def _knees(rows: Sequence[KneeRow]) -> str:
    """Two sides' knees per swept series: each side's, B/A with its interval, the verdict."""
    body = [[escape(k.series), _num(k.base_knee_rps, ",.0f"), _num(k.new_knee_rps, ",.0f"),
             _ci(k.ratio, k.low, k.high),
             f'<span class="verdict" style="background:'
             f'{VERDICT_COLOUR.get(k.verdict, "#333")}">{escape(k.verdict)}</span> '
             f'<span class="hint">{escape(k.reason)}</span>'] for k in rows]
    first = rows[0]
    return (f"<h3>Knees: {escape(first.new)} vs {escape(first.base)}</h3>"
            f"<p>Knee rps per round ({escape(first.method)}), judged by the verdict rule as a "
            "throughput.</p>"
            + _table(("series", f"{first.base} knee rps", f"{first.new} knee rps",
                      "B/A [95% CI]", "verdict"), body, numeric=(1, 2, 3)))


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)
