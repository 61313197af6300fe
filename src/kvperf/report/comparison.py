"""Rendering a comparison: a markdown report (PR comment) and a terminal table."""

from __future__ import annotations

import math

from rich.table import Table

from kvperf.analysis.comparison import GroupKey, MetricComparison, describe_group
from kvperf.analysis.sequential import SeriesStop
from kvperf.analysis.verdict import Decision, Verdict

VERDICT_MARK = {Verdict.REGRESSION: "🔴 regression", Verdict.IMPROVEMENT: "🟢 improvement",
                Verdict.NO_CHANGE: "no change", Verdict.INCONCLUSIVE: "⚪ inconclusive",
                Verdict.UNSTABLE: "🟠 unstable", Verdict.INSUFFICIENT_DATA: "insufficient data",
                Verdict.NOT_COMPARABLE: "⚫ not comparable"}


def _ci(c: MetricComparison) -> str:
    if math.isnan(c.ci.ratio):
        return "-"
    if math.isnan(c.ci.low):
        return f"{c.ci.ratio:.3f}"
    return f"{c.ci.ratio:.3f} [{c.ci.low:.3f}, {c.ci.high:.3f}]"


def _p(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2g}"


_EXPLAINED = (Verdict.INCONCLUSIVE, Verdict.UNSTABLE, Verdict.NOT_COMPARABLE)


def _verdict(c: MetricComparison) -> str:
    return verdict_text(c.decision)


def verdict_text(d: Decision) -> str:
    """The verdict, with its reason where the reader needs one: what would settle an
    inconclusive row, why a row is unstable, and that a single sample had no statistics."""
    text = VERDICT_MARK[d.verdict]
    if not d.statistics:  # single sample or constant sides: say so, with the water line
        return f"{text} ({d.reason})"
    return f"{text} ({d.reason})" if d.verdict in _EXPLAINED else text


def ordered(results: list[MetricComparison]) -> list[MetricComparison]:
    """Largest effect first (NaN last)."""
    return sorted(results, key=lambda c: -abs(c.change) if not math.isnan(c.change) else 0)


def _change(c: MetricComparison) -> str:
    """The % change; a dash when a side has no judged value (see ``Stats``)."""
    return "-" if math.isnan(c.change) else f"{c.change:+.2%}"


def _md_row(c: MetricComparison) -> str:
    cells = [describe_group(c.group), c.metric, c.base.text(), c.new.text(),
             _change(c), _ci(c), _p(c.p_adjusted), _verdict(c)]
    return "| " + " | ".join(cells) + " |"


MD_HEADER = ("| series | metric | baseline | new | change | ratio [95% CI] | p (adj.) | verdict |\n"
             "| --- | --- | --- | --- | --- | --- | --- | --- |")


_RULE = ("verdicts: significant at α=0.01 and beyond the minimum effect (2% throughput and "
         "CPU, 5% latency); no change when the 95% CI lies inside it; otherwise unstable above "
         "10% CV, else inconclusive; one value per side: the % change against the water line, "
         "without statistics.")
_ADJUSTED = ("adjusted across series (Simes + Benjamini–Hochberg) and within them (BH); ")
UNPAIRED_NOTE = ("Ratios are new/baseline (geometric means, 95% t CI on logs); p: two-sample "
                 "t-test on logs, " + _ADJUSTED + "Mann–Whitney U as a robustness check; "
                 + _RULE)
PAIRED_NOTE = ("Interleaved runs, paired by round: ratio = geometric mean of B/A per round with "
               "a 95% t CI; p: paired t-test on the log ratios, " + _ADJUSTED
               + "Wilcoxon signed-rank as a robustness check; " + _RULE)


def markdown(results: list[MetricComparison], unmatched: list[GroupKey],
             base_name: str, new_name: str, note: str = UNPAIRED_NOTE) -> str:
    """A PR-comment report: changed rows first by effect, "no change" rows folded."""
    rows = ordered(results)
    shown = [c for c in rows if c.decision.verdict is not Verdict.NO_CHANGE]
    folded = [c for c in rows if c.decision.verdict is Verdict.NO_CHANGE]
    counts = {v: sum(1 for c in rows if c.decision.verdict is v) for v in Verdict}
    summary = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
    out = [f"## kvperf: `{new_name}` vs `{base_name}`", "", f"{len(rows)} rows: {summary}.", ""]
    if shown:
        out += [MD_HEADER, *map(_md_row, shown), ""]
    if folded:
        out += [f"<details><summary>{len(folded)} rows with no change</summary>", "",
                MD_HEADER, *map(_md_row, folded), "", "</details>", ""]
    if unmatched:
        out += ["Series present on one side only: "
                + ", ".join(describe_group(k) for k in unmatched), ""]
    out.append(note)
    return "\n".join(out) + "\n"


def terminal_table(results: list[MetricComparison], base_name: str, new_name: str) -> Table:
    table = Table(title=f"{new_name} vs {base_name}")
    for name in ("series", "metric", "baseline", "new", "change", "ratio [95% CI]", "p (adj.)",
                 "verdict"):
        table.add_column(name)
    for c in ordered(results):
        table.add_row(describe_group(c.group), c.metric, c.base.text(), c.new.text(),
                      _change(c), _ci(c), _p(c.p_adjusted), _verdict(c))
    return table


def sides_table(results: list[MetricComparison], labels: dict[str, str]) -> Table:
    """N servers: one table of every other side against the first (the baseline), a row
    per (series, server, metric); ``labels``: side → its readable label, baseline first."""
    names = list(labels)
    table = Table(title=f"ratios against the baseline {labels[names[0]]}")
    for name in ("series", "server", "metric", "baseline", "value", "change",
                 "ratio [95% CI]", "p (adj.)", "verdict"):
        table.add_column(name)
    order = {name: n for n, name in enumerate(names)}
    rows = sorted(results, key=lambda c: (describe_group(c.group), order.get(c.side, 0)))
    for c in rows:
        table.add_row(describe_group(c.group), labels.get(c.side, c.side), c.metric,
                      c.base.text(), c.new.text(), _change(c), _ci(c),
                      _p(c.p_adjusted), _verdict(c))
    return table


def sides_markdown(results: list[MetricComparison], labels: dict[str, str],
                   note: str = PAIRED_NOTE) -> str:
    """N servers as markdown: a section per non-baseline side (its rows already corrected
    for all N − 1 comparisons)."""
    names = list(labels)
    parts = [markdown([c for c in results if c.side == name], [], labels[names[0]],
                      labels[name], note=note) for name in names[1:]]
    return "\n".join(parts)


def stop_lines(stops: list[SeriesStop]) -> list[str]:
    """``--runs auto``: per series, the rounds both sides ran and why they stopped."""
    return [f"{s.series}: {s.text()}" for s in stops]


def stops_markdown(stops: list[SeriesStop]) -> str:
    """``--runs auto``'s section of the markdown report (empty without it)."""
    if not stops:
        return ""
    return ("\n### Rounds (`--runs auto`)\n\n" + "".join(f"- {line}\n" for line in
                                                          stop_lines(stops))
            + f"\n{SEQUENTIAL_NOTE}\n")


SEQUENTIAL_NOTE = ("Rounds were added one at a time, both sides alike; the rule looked after "
                   "each round from the third, and each series stopped at the first look that "
                   "decided it (its rps decided, or any of its metrics flagged), keeping that "
                   "verdict, its later rounds not run; every look (and the verdicts above) "
                   "tests at one level below α = 0.01 (calibrated for this --max-runs, else "
                   "0.01 divided by the looks) so that repeated looks keep false alarms "
                   "within 1% (docs/PERFORMANCE.md \"Sequential verdicts\").")
