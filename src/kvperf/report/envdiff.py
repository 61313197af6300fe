"""The environment diff (analysis/envdiff.py) as text: a terminal table with the warnings
under it, a markdown section, an HTML block ("What differs")."""

from __future__ import annotations

from html import escape

from rich.table import Table

from kvperf.analysis.envdiff import EnvDiff, FactDiff

__all__ = ["SAME", "EnvDiff", "html_block", "markdown", "terminal_table", "warning_lines"]

SAME = "environment: the sides' recorded facts are the same"


def _why(fact: FactDiff) -> str:
    varies = "varies within a side" if fact.varies else ""
    said = fact.warning or fact.note or ""
    return "; ".join(p for p in (said, varies) if p)


def warning_lines(diff: EnvDiff) -> list[str]:
    """One line per difference known to move results."""
    return [f"! environment: {f.fact} differs ({' vs '.join(f.values)}): {f.warning}"
            for f in diff.warnings]


def terminal_table(diff: EnvDiff) -> Table:
    table = Table(title="environment: what differs between the sides")
    for name in ("fact", *diff.sides, "moves results?"):
        table.add_column(name)
    for f in diff.facts:
        table.add_row(f.fact, *f.values, ("⚠ " if f.warning else "") + _why(f))
    return table


def markdown(diff: EnvDiff) -> str:
    """A markdown section (empty text when nothing differs)."""
    if not diff:
        return ""
    cells = " | ".join(diff.sides)
    lines = ["", "### Environment: what differs", "",
             f"| fact | {cells} | moves results? |",
             "|---|" + "---|" * len(diff.sides) + "---|"]
    lines += [f"| {f.fact} | " + " | ".join(v.replace("|", "\\|") for v in f.values)
              + f" | {'⚠️ ' if f.warning else ''}{_why(f)} |" for f in diff.facts]
    return "\n".join(lines) + "\n"


def html_block(diff: EnvDiff) -> str:
    """The report's "What differs" section (a sentence when nothing does)."""
    if not diff:
        return f"<h2>What differs</h2><p>{escape(SAME)}.</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in ("fact", *diff.sides, "moves results?"))
    body = "".join(
        f"<tr><td>{escape(f.fact)}</td>"
        + "".join(f"<td>{escape(v)}</td>" for v in f.values)
        + f"<td>{'⚠ ' if f.warning else ''}{escape(_why(f))}</td></tr>" for f in diff.facts)
    warn = "".join(f'<div class="warn">{escape(line.lstrip("! "))}</div>'
                   for line in warning_lines(diff))
    return f"<h2>What differs</h2>{warn}<table><tr>{head}</tr>{body}</table>"
