"""`kvperf alerts`: the summaries as a terminal table and JSON, and one alert's ready-to-file
report (markdown or HTML, from the same blocks): the culprit and its parent, every series
that moved with its magnitude and CI, the differential flamegraphs and instruction tables
found beside the bisection, both sides' environments, and the commands that reproduce it."""

from __future__ import annotations

import html
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from rich.table import Table

from kvperf.analysis.alerts import Step
from kvperf.analysis.bisect import series_text
from kvperf.analysis.bisect_log import BisectLog
from kvperf.report.regressions import describe_params
from kvperf.results.row import SeriesParams
from kvperf.store.alerts import AlertSummary, Note


def _when(summary: AlertSummary) -> str:
    return summary.updated_at.isoformat(timespec="minutes")


def summaries_table(found: Sequence[AlertSummary]) -> Table:
    """One row per summary: id, state, owner, range, culprit, its series."""
    table = Table("id", "state", "owner", "commits", "culprit", "series moved", "updated")
    for s in found:
        moved = ", ".join(f"{describe_params(a.params)} {a.metric} {a.magnitude:+.1%}"
                          for a in s.alerts)
        table.add_row(str(s.id), s.state, s.owner or "", s.commit_range,
                      (s.culprit_sha or "")[:12], moved, _when(s))
    return table


def alerts_table(s: AlertSummary) -> Table:
    """One summary's alerts: the series that moved, their change and means."""
    table = Table("alert", "series", "metric", "direction", "change", "before → after", "p")
    for a in s.alerts:
        colour = "red" if a.direction == "regression" else "green"
        table.add_row(str(a.id), describe_params(a.params), a.metric,
                      f"[{colour}]{a.direction}[/{colour}]", _pct(a.magnitude),
                      f"{a.before_mean:.6g} → {a.after_mean:.6g}", _p(a.pvalue))
    return table


class AlertJson(TypedDict):
    id: int
    series_key: str
    params: SeriesParams
    metric: str
    direction: str
    magnitude: float
    pvalue: float | None
    before_mean: float
    after_mean: float


class NoteJson(TypedDict):
    at: str
    state: str
    by: str | None
    text: str


class SummaryJson(TypedDict):
    """`kvperf alerts list --json`'s items and `show --json`'s document."""

    id: int
    state: str
    owner: str | None
    last_before_sha: str
    first_after_sha: str
    culprit_sha: str | None
    parent_sha: str | None
    bisect_log: str | None
    notes: list[NoteJson]
    stamps: dict[str, str | None]  # created_at, updated_at, acknowledged_at, …
    alerts: list[AlertJson]


def summary_json(s: AlertSummary) -> SummaryJson:
    """A summary as JSON: its lifecycle and its alerts."""
    stamps = {k: (v.isoformat() if v else None) for k, v in (
        ("created_at", s.created_at), ("updated_at", s.updated_at),
        ("acknowledged_at", s.acknowledged_at), ("culprit_at", s.culprit_at),
        ("resolved_at", s.resolved_at), ("first_after_at", s.first_after_at))}
    alerts = [AlertJson(id=a.id, series_key=a.series_key, params=a.params, metric=a.metric,
                        direction=a.direction, magnitude=a.magnitude,
                        pvalue=a.pvalue if math.isfinite(a.pvalue) else None,
                        before_mean=a.before_mean, after_mean=a.after_mean)
              for a in s.alerts]
    notes = [NoteJson(at=n.at, state=n.state, by=n.by, text=n.text) for n in s.notes]
    return SummaryJson(id=s.id, state=s.state, owner=s.owner,
                       last_before_sha=s.last_before_sha, first_after_sha=s.first_after_sha,
                       culprit_sha=s.culprit_sha, parent_sha=s.parent_sha,
                       bisect_log=s.bisect_log, notes=notes, stamps=stamps, alerts=alerts)


def _note(n: Note) -> str:
    return f"note ({n.at}, {n.state}, {n.by or 'anonymous'}): {n.text}"


def summary_lines(s: AlertSummary) -> list[str]:
    """`kvperf alerts show`: the lifecycle, line by line (the series follow as a table)."""
    lines = [f"alert {s.id}: {s.state}" + (f", owner {s.owner}" if s.owner else ""),
             f"commits: {s.last_before_sha}..{s.first_after_sha}"]
    if s.culprit_sha:
        lines.append(f"culprit: {s.culprit_sha} (parent {s.parent_sha})")
    for label, when in (("created", s.created_at), ("acknowledged", s.acknowledged_at),
                        ("culprit named", s.culprit_at), ("resolved", s.resolved_at)):
        if when is not None:
            lines.append(f"{label}: {when.isoformat(timespec='seconds')}")
    lines += [_note(n) for n in s.notes]
    return lines


@dataclass(frozen=True)
class AlertReport:
    """What one alert's report holds (pipeline/commands/alerts.py gathers it)."""

    summary: AlertSummary
    steps: Mapping[int, Step]  # alert id → its change with CI
    subjects: Mapping[str, str]  # sha → subject line
    environments: Mapping[str, dict[str, str]]  # sha → its latest run's env, flat
    bisect: BisectLog | None
    differentials: Sequence[Path]
    database: str
    instruction_diff: str | None = None  # the culprit's compare's instructions.md

    @property
    def culprit(self) -> str:
        return self.summary.culprit_sha or self.summary.first_after_sha

    @property
    def parent(self) -> str:
        return self.summary.parent_sha or self.summary.last_before_sha


def report_title(s: AlertSummary) -> str:
    kind = "Regression" if s.regression else "Improvement"
    moved = sorted({f"{describe_params(a.params)} {a.metric}" for a in s.alerts})
    where = f"at {s.culprit_sha[:12]}" if s.culprit_sha else f"in {s.commit_range}"
    return f"{kind} {where}: {', '.join(moved)[:120]} (kvperf alert {s.id})"


Block = tuple[str, str] | tuple[str, list[str], list[list[str]]]


def _p(x: float) -> str:
    return f"{x:.1e}" if math.isfinite(x) else "n/a"


def _pct(x: float) -> str:
    return f"{x:+.1%}" if math.isfinite(x) else "n/a"


def _series_rows(r: AlertReport) -> list[list[str]]:
    rows = []
    for a in r.summary.alerts:
        st = r.steps.get(a.id)
        ci = (f"[{_pct(st.low)}, {_pct(st.high)}]" if st and math.isfinite(st.low)
              else "n/a")
        commits = f"{st.before_commits} / {st.after_commits}" if st else "n/a"
        rows.append([describe_params(a.params), a.metric, a.direction, _pct(a.magnitude),
                     ci, f"{a.before_mean:.6g} → {a.after_mean:.6g}", _p(a.pvalue), commits])
    return rows


def _environment_rows(r: AlertReport) -> list[list[str]]:
    """Every environment fact of either side, those that differ first (marked)."""
    a, b = (r.environments.get(sha) or {} for sha in (r.parent, r.culprit))
    keys = sorted(a.keys() | b.keys(), key=lambda k: (a.get(k) == b.get(k), k))
    return [[k, a.get(k, "—"), b.get(k, "—"), "≠" if a.get(k) != b.get(k) else ""]
            for k in keys]


def _reproduce(r: AlertReport) -> str:
    log, s = r.bisect, r.summary
    repo = shlex.quote(log.repo) if log else "REPO"
    config = f" --config {shlex.quote(log.config)}" if log and log.config != "built-in" else ""
    first = s.alerts[0] if s.alerts else None
    series = shlex.quote(log.series if log else series_text(first.params) if first else "")
    metric = log.metric if log else first.metric if first else "rps"
    return "\n".join([
        f"kvperf compare --repo {repo}{config} {r.parent} {r.culprit}",
        f"kvperf compare --repo {repo}{config} --measure instructions {r.parent} {r.culprit}",
        f"kvperf compare --repo {repo}{config} --profile {r.parent} {r.culprit}",
        f"kvperf bisect --repo {repo}{config} --series {series} --metric {metric} "
        f"{s.last_before_sha} {s.first_after_sha}"])


def _commit(r: AlertReport, sha: str) -> str:
    subject = r.subjects.get(sha)
    return f"`{sha}`" + (f" {subject}" if subject else "")


def _head(r: AlertReport) -> list[Block]:
    s = r.summary
    named = (f"Culprit (named by bisection, {r.bisect.measure if r.bisect else 'log'}: "
             f"{s.bisect_log}): {_commit(r, r.culprit)}" if s.culprit_sha
             else f"No bisection has named a culprit yet; the range's first new commit: "
                  f"{_commit(r, r.culprit)}")
    return [("h1", report_title(s)),
            ("p", f"State **{s.state}**" + (f", owner {s.owner}" if s.owner else "")
             + f". Commits {s.last_before_sha[:12]}..{s.first_after_sha[:12]}; database "
               f"{r.database}."),
            ("p", named), ("p", f"Parent: {_commit(r, r.parent)}")]


def blocks(r: AlertReport) -> list[Block]:
    """The report's sections, for markdown and HTML alike."""
    out = _head(r)
    out += [("h2", "Series that moved"),
            ("table", ["series", "metric", "direction", "change", "CI", "before → after",
                       "p", "commits before / after"], _series_rows(r))]
    out.append(("h2", "Differential flamegraph and instruction diff (culprit vs parent)"))
    if r.instruction_diff:
        out.append(("raw", r.instruction_diff))
    if r.differentials:
        out += [("link", str(p)) for p in r.differentials]
    elif not r.instruction_diff:
        out.append(("p", "None stored beside the bisection: run the instructions and "
                         "profile compares below (their differential flamegraphs and "
                         "instruction tables are written to their results directory)."))
    envs = _environment_rows(r)
    out += [("h2", "Environments (parent | culprit)"),
            ("table", ["fact", "parent", "culprit", ""], envs) if envs else
            ("p", "No environment is stored for either commit (runs of seed files carry "
                  "none)."),
            ("h2", "Reproduce"), ("code", _reproduce(r))]
    if r.summary.notes:
        out += [("h2", "Notes"), ("table", ["at", "state", "by", "note"],
                                  [[n.at, n.state, n.by or "", n.text]
                                   for n in r.summary.notes])]
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(r: AlertReport) -> str:
    lines: list[str] = []
    for block in blocks(r):
        kind = block[0]
        if kind == "table":
            _, header, rows = block  # type: ignore[misc]
            lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
        elif kind == "code":
            lines += ["```sh", str(block[1]), "```"]
        elif kind == "raw":
            lines.append(re.sub(r"^#{1,3} ", "#### ", str(block[1]), flags=re.M))  # nested
        elif kind == "link":
            lines.append(f"- [{Path(str(block[1])).name}]({block[1]})")
        else:
            marks = {"h1": "# ", "h2": "## ", "p": ""}[kind]
            lines.append(marks + str(block[1]))
        lines.append("")
    return "\n".join(lines)


def report_html(r: AlertReport) -> str:
    e, parts = html.escape, []
    for block in blocks(r):
        kind = block[0]
        if kind == "table":
            _, header, rows = block  # type: ignore[misc]
            head = "".join(f"<th>{e(h)}</th>" for h in header)
            body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
                           for row in rows)
            parts.append(f"<table><tr>{head}</tr>{body}</table>")
        elif kind in ("code", "raw"):
            parts.append(f"<pre><code>{e(str(block[1]))}</code></pre>")
        elif kind == "link":
            parts.append(f'<p><a href="{e(str(block[1]))}">{e(str(block[1]))}</a></p>')
        else:
            tag = {"h1": "h1", "h2": "h2", "p": "p"}[kind]
            parts.append(f"<{tag}>{e(str(block[1])).replace('**', '')}</{tag}>")
    title = e(report_title(r.summary))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            "</head><body>" + "\n".join(parts) + "</body></html>\n")
