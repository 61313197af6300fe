"""`kvperf bisect` rendered: a line per step as it finishes, the answer, the steps table
(terminal and markdown) and, in instruction mode, the functions that moved at the first bad
commit's step."""

from __future__ import annotations

import math

from rich.table import Table

from kvperf.analysis.bisect import Mark, SeriesEffect
from kvperf.analysis.bisect_log import BisectLog, Step
from kvperf.analysis.instructions import MovedFunction
from kvperf.report.comparison import VERDICT_MARK
from kvperf.report.instructions import MOVED_COLUMNS, moved_cells

STEP_COLUMNS = ("step", "commit", "subject", "effect", "95% CI", "verdict", "mark", "runs")


def effect_text(e: SeriesEffect | None) -> tuple[str, str]:
    """(change, interval) in percent; '-' where there is none."""
    if e is None or math.isnan(e.change):
        return "-", "-"
    ci = "-" if math.isnan(e.low) else f"[{e.low:+.2%}, {e.high:+.2%}]"
    return f"{e.change:+.2%}", ci


def _verdict(step: Step, e: SeriesEffect | None) -> str:
    if step.build_error:
        return "build failed"
    if e is None:
        return "no result"
    return VERDICT_MARK[e.verdict]


def step_cells(log: BisectLog, step: Step) -> list[str]:
    e = step.effect(log.series)
    change, ci = effect_text(e)
    number = "0 (GOOD vs BAD)" if step.number == 0 else str(step.number)
    return [number, step.sha[:12], step.subject, change, ci, _verdict(step, e),
            str(step.mark or "-"), str(step.runs)]


def step_line(log: BisectLog, step: Step) -> str:
    """One finished step: commit, effect with its CI, verdict, mark; the other series."""
    number, sha, subject, change, ci, verdict, mark, runs = step_cells(log, step)
    e = step.effect(log.series)
    reason = f" ({e.reason})" if e and e.verdict is not None and e.reason else ""
    head = (f"step {number}: {sha} {subject} — {log.series} {log.metric} {change} {ci} "
            f"{verdict}{reason} → {mark} ({runs} runs/side)")
    if step.build_error:
        head += f"\n  {step.build_error}"
    others = [f"{o.series} {effect_text(o)[0]} {VERDICT_MARK[o.verdict]}"
              for o in step.effects if o.series != log.series]
    return head + (f"\n  other series: {'; '.join(others)}" if others else "")


def answer(log: BisectLog) -> list[str]:
    """The first bad commit (full sha and subject), or the range the skips leave."""
    found = log.outcome()
    word = "bad" if log.direction is None else f"bad ({log.direction})"
    if found.found:
        commit = log.commits[found.bad]
        return [f"first {word} commit: {commit.sha} {commit.subject}"]
    lines = [f"only skipped commits are left: the first {word} commit is one of"]
    lines += [f"  {log.commits[i].sha} {log.commits[i].subject}"
              for i in (*found.skipped, found.bad)]
    return lines


def steps_table(log: BisectLog) -> Table:
    table = Table(title=f"bisect {log.good[:12]}..{log.bad[:12]}: {log.series} {log.metric}")
    for name in STEP_COLUMNS:
        table.add_column(name)
    for step in log.steps:
        table.add_row(*step_cells(log, step))
    return table


def moved_table(log: BisectLog, moved: list[MovedFunction]) -> Table:
    found = log.commits[log.outcome().bad]
    table = Table(title=f"{log.series} at {found.sha[:12]}: inclusive cost moved most")
    for name in MOVED_COLUMNS:
        table.add_column(name)
    for f in moved:
        table.add_row(*moved_cells(f))
    return table


def _md(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown(log: BisectLog, moved: list[MovedFunction]) -> str:
    """The bisection as a markdown report: answer, steps, moved functions."""
    out = [f"## kvperf bisect: {log.series} {log.metric}", "",
           f"`{log.good[:12]}` (GOOD) .. `{log.bad[:12]}` (BAD): {len(log.commits) - 1} "
           f"commits, {len(log.steps)} steps, measured by {log.measure}.", ""]
    out += [line.replace("  ", "- ", 1) if line.startswith("  ") else line
            for line in answer(log)]
    out += ["", _md(list(STEP_COLUMNS)), _md(["---"] * len(STEP_COLUMNS))]
    out += [_md(step_cells(log, s)) for s in log.steps]
    if moved:
        found = log.commits[log.outcome().bad]
        out += ["", f"### Inclusive cost moved most at `{found.sha[:12]}`", "",
                _md(list(MOVED_COLUMNS)), _md(["---"] * len(MOVED_COLUMNS))]
        out += [_md(moved_cells(f)) for f in moved]
    skipped = [s for s in log.steps if s.mark is Mark.SKIP]
    if skipped:
        out += ["", f"{len(skipped)} step(s) skipped (no build, or no verdict within "
                    f"{log.max_runs} runs per side)."]
    return "\n".join(out) + "\n"
