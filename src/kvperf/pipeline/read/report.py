"""`kvperf report`'s workflow: paths → sides (rows and histograms read) → report → HTML and
JSON files.

A path is a label directory (holding metrics.json), a metrics.json file, or a comparison's
directory (holding ``A/`` and ``B/``, as `kvperf compare` and `kvperf noise` write them).
One side makes a run report, two an A/B report (the first is the baseline), a comparison
directory of N servers (A/ … as `compare --server-bin` × N writes it) one comparison per
server against the first.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvperf.analysis.clients import ClientLine
from kvperf.analysis.comparison import compare_sides
from kvperf.core.errors import StoreError, UsageError
from kvperf.pipeline.request.stored import ReportRequest
from kvperf.report.clients import clients_markdown
from kvperf.report.comparison import PAIRED_NOTE, UNPAIRED_NOTE, markdown, sides_markdown
from kvperf.report.envdiff import markdown as environment_markdown
from kvperf.report.html import render
from kvperf.report.model import (
    Report,
    Source,
    build,
    interleaved,
    judge_sides,
    source_label,
    to_json,
)
from kvperf.store.files import read_histograms, read_rows, write_text_atomic

METRICS = "metrics.json"


def metrics_files(paths: list[Path]) -> list[Path]:
    """The metrics.json file of each side named by ``paths`` (module doc); UsageError for
    anything else, naming the path."""
    files: list[Path] = []
    for path in paths:
        if path.is_file():
            files.append(path)
        elif (path / METRICS).is_file():
            files.append(path / METRICS)
        elif (path / "A" / METRICS).is_file() and (path / "B" / METRICS).is_file():
            files += comparison_files(path)
        elif path.is_dir():
            labels = sorted({p.relative_to(path).parts[0] for pattern in (f"*/{METRICS}",
                             f"*/A/{METRICS}") for p in path.glob(pattern)})
            found = f" (its label directories: {', '.join(labels)})" if labels else ""
            raise UsageError(f"{path}: no {METRICS} here, nor A/ and B/ with one each; give a "
                             f"label directory (<results-dir>/<label>), a {METRICS}, or a "
                             f"comparison's directory{found}")
        else:
            raise UsageError(f"{path}: no such file or directory")
    if not files or (len(files) > 2 and len(paths) > 1):
        raise UsageError(f"a report shows one side or two (A/B), or one comparison's "
                         f"directory (N servers), got {len(files)}: "
                         + ", ".join(map(str, files)))
    return files


def comparison_files(path: Path) -> list[Path]:
    """A comparison directory's sides in order (A, B, C …, S27 …): each one's metrics.json."""
    sides = [p.parent for p in path.glob(f"*/{METRICS}") if _side_name(p.parent.name)]
    return [side / METRICS for side in sorted(sides, key=lambda p: (len(p.name), p.name))]


def _side_name(name: str) -> bool:
    return (len(name) == 1 and name.isupper()) or (name[:1] == "S" and name[1:].isdigit())


def load_source(path: Path) -> Source:
    """One side: its rows (upgraded; bad files → UsageError) and its histogram reader."""
    try:
        rows = read_rows(path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if not rows:
        raise UsageError(f"{path} has no result rows")
    base = path.parent
    return Source(base.name or str(path), str(path), rows,
                  lambda row: read_histograms(base, row))


def sides(paths: list[Path]) -> tuple[list[Source], bool]:
    """The sides ``paths`` name, and whether two are paired: the rounds of one interleaved
    run (sibling label directories whose rows pair by round)."""
    files = metrics_files(paths)
    sources = [load_source(p) for p in files]
    if len(sources) == 1:
        return sources, False
    if len({s.name for s in sources}) < len(sources):
        sources = [Source(s.path, s.path, s.rows, s.histograms) for s in sources]
    siblings = len({f.parent.parent.resolve() for f in files}) == 1
    return sources, siblings and all(interleaved(sources[0], s) for s in sources[1:])


def comparison_markdown(sources: list[Source], paired: bool,
                        clients: list[ClientLine] | None = None) -> str:
    """The A/B comparison as compare's markdown (a PR comment), and the client libraries'
    table when clients ran (then one side is enough)."""
    table = "\n" + clients_markdown(clients) if clients else ""
    if len(sources) == 1 and table:
        return table.lstrip("\n")
    if len(sources) < 2:
        raise UsageError("--markdown needs two sides or more (a comparison), or a run of "
                         "client libraries (--client)")
    return _sides_markdown(sources, paired) + table


def _sides_markdown(sources: list[Source], paired: bool) -> str:
    if len(sources) > 2:  # judged together, as the report and compare judge them
        results = compare_sides({s.name: s.rows for s in sources}, paired=paired)
        return sides_markdown(results, {s.name: _named(s) for s in sources},
                              PAIRED_NOTE if paired else UNPAIRED_NOTE)
    base, new = sources
    results, unmatched = judge_sides(base, new, paired)
    return markdown(results, unmatched, _named(base), _named(new),
                    PAIRED_NOTE if paired else UNPAIRED_NOTE)


def _named(source: Source) -> str:
    """A side in the markdown's title: its directory and, when they differ, the label its
    readers know (``B (valkey 9.1.2)``)."""
    label = source_label(source)
    return source.name if label == source.name else f"{source.name} ({label})"


def write_report(request: ReportRequest) -> Report:
    """Build the report and write its HTML (and JSON, markdown) files."""
    sources, paired = sides(request.paths)
    report = build(sources, paired)
    text = (comparison_markdown(sources, paired, report.clients)
            + (environment_markdown(report.environment) if report.environment else "")
            if request.markdown else None)
    try:
        write_text_atomic(request.html, render(report))
        if request.json:
            write_text_atomic(request.json, json.dumps(to_json(report), indent=2) + "\n")
        if request.markdown and text is not None:
            write_text_atomic(request.markdown, text)
    except OSError as exc:
        raise UsageError(f"cannot write the report: {exc}") from None
    return report
