"""`report --definitions`: a commit's corpus against its baseline (analysis/corpus.py) as
terminal tables, markdown (a PR comment or a CI summary) and one self-contained HTML page
(pure: text and renderables from the report)."""

from __future__ import annotations

import html

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.corpus import CorpusReport, Entry
from kvperf.analysis.verdict import Verdict
from kvperf.report.definitions import rate

HEADERS = ("definition", "topology", "groups", "status", "ops/s", "baseline ops/s", "change",
           "verdict", "KPIs")
TOTALS = ("group", "tests", "regressions", "improvements", "failed", "KPIs failed")


def _cells(e: Entry) -> tuple[str, ...]:
    change = e.change
    kpis = (f"{len(e.kpis_failed)} of {e.kpis} failed: " + "; ".join(e.kpis_failed)
            if e.kpis_failed else f"{e.kpis} passed" if e.kpis else "-")
    verdict = f"{e.verdict}: {e.reason}" if e.reason else e.verdict
    status = f"{e.status}: {e.error}" if e.error else e.status
    return (e.name, e.topology, " ".join(e.groups), status,
            rate(e.rps) if e.rps is not None else "-",
            rate(e.base_rps) if e.base_rps is not None else "-",
            f"{change:+.1%}" if change is not None else "-", verdict or "-", kpis)


def _totals(report: CorpusReport) -> list[tuple[str, ...]]:
    return [(t.group, str(t.tests), str(t.regressions), str(t.improvements), str(t.failed),
             str(t.kpis_failed)) for t in report.totals]


def title(report: CorpusReport) -> str:
    against = f" against {report.baseline[:12]}" if report.baseline else ""
    return (f"definition corpus of {report.commit[:12]}{against}: {len(report.entries)} "
            f"test(s), {report.regressions} regression(s), {report.kpis_failed} KPI(s) "
            "failed")


def tables(report: CorpusReport) -> list[Table]:
    """The tests (worst change first), the totals per group."""
    tests = Table(*HEADERS, title=title(report))
    colour = {Verdict.REGRESSION: "red", Verdict.IMPROVEMENT: "green"}
    for e in report.entries:
        cells = [escape(c) for c in _cells(e)]
        hue = colour.get(Verdict(e.verdict)) if e.verdict in colour else None
        tests.add_row(*(f"[{hue}]{c}[/{hue}]" if hue else c for c in cells))
    totals = Table(*TOTALS, title="totals per tested group")
    for row in _totals(report):
        totals.add_row(*map(escape, row))
    return [tests, totals]


def _md_row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def markdown(report: CorpusReport) -> str:
    lines = [f"## {title(report)}", "", _md_row(HEADERS), _md_row(("---",) * len(HEADERS))]
    lines += [_md_row(_cells(e)) for e in report.entries]
    lines += ["", "### Totals per tested group", "", _md_row(TOTALS),
              _md_row(("---",) * len(TOTALS)), *map(_md_row, _totals(report))]
    if report.notes:
        lines += ["", "### Refused or not run", "", *(f"- {n}" for n in report.notes)]
    return "\n".join(lines) + "\n"


def _html_table(headers: tuple[str, ...], rows: list[tuple[str, ...]],
                marks: list[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(f'<tr class="{m}">' + "".join(f"<td>{html.escape(c)}</td>" for c in r)
                   + "</tr>" for r, m in zip(rows, marks, strict=True))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
         "tr.regression{background:#fdd}tr.improvement{background:#dfd}"
         "tr.failed{background:#fec}")


def html_page(report: CorpusReport) -> str:
    """One self-contained page: the title, the tests, the totals, the notes."""
    marks = [e.verdict.replace(" ", "-") if e.verdict else e.status.replace(" ", "-")
             for e in report.entries]
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title(report))}</title><style>{STYLE}</style></head><body>"
            f"<h1>{html.escape(title(report))}</h1>"
            + _html_table(HEADERS, [_cells(e) for e in report.entries], marks)
            + "<h2>Totals per tested group</h2>"
            + _html_table(TOTALS, _totals(report), [""] * len(report.totals))
            + (f"<h2>Refused or not run</h2><ul>{notes}</ul>" if notes else "")
            + "</body></html>\n")
