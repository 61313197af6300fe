"""`kvperf report PATH…`: one self-contained HTML page (and its numbers as JSON, an A/B's
markdown) from a run, an A/B or a comparison's directory (pipeline/read/report.py); or
`--history`, the stored history's page with its change points marked
(pipeline/read/history_report.py); or `--definitions`, a commit's definition corpus against
a baseline's (pipeline/read/corpus.py). ``report_request`` checks the flags before anything is
read; ``report`` writes the files and returns what it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.analysis.corpus import CorpusReport
from kvperf.analysis.envdiff import EnvDiff
from kvperf.analysis.regressions import DEFAULT_METRICS
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request, water_line_rule
from kvperf.pipeline.read.corpus import corpus_page
from kvperf.pipeline.read.history_report import history_page
from kvperf.pipeline.read.report import write_report
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import (
    CorpusReportRequest,
    HistoryPageRequest,
    ReportRequest,
)
from kvperf.pipeline.world import World
from kvperf.store.history import check_metric, parse_where

__all__ = ["DEFAULT_METRICS", "CorpusReport", "HistoryReported", "Reported", "corpus_request",
           "report", "report_corpus", "report_request"]


def corpus_request(*, paths: tuple[Path, ...], commit: str | None, baseline: str | None,
                   water_line: float, output: Path | None, json: Path | None,
                   markdown: Path | None, store: StoreFlags) -> CorpusReportRequest:
    """`kvperf report --definitions --commit X [--baseline Y]` (the database)."""
    if paths or json:
        raise UsageError("--definitions reads the database: give no PATH and no --json")
    if not commit:
        raise UsageError("--definitions needs --commit SHA (the commit whose corpus to "
                         "report; --baseline SHA to judge it against another's)")
    return CorpusReportRequest(commit, baseline, water_line_rule(water_line),
                               store_request(store), output, markdown)


def report_request(*, paths: tuple[Path, ...], history: bool, metrics: tuple[str, ...],
                   where: tuple[str, ...], output: Path | None, json: Path | None,
                   markdown: Path | None, store: StoreFlags, include_disturbed: bool = False
                   ) -> ReportRequest | HistoryPageRequest:
    """`kvperf report PATH…` (a run or an A/B), or `--history` (the database)."""
    if history:
        if paths or markdown:
            raise UsageError("--history reads the database: give no PATH and no --markdown")
        return HistoryPageRequest(tuple(check_metric(m) for m in metrics or DEFAULT_METRICS),
                                  parse_where(where), store_request(store),
                                  output or Path.cwd() / "history.html", json,
                                  include_disturbed)
    if not paths:
        raise UsageError("give a PATH (a label directory, metrics.json or comparison "
                         "directory), or --history")
    if metrics or where or include_disturbed:
        raise UsageError("--metric, --where and --include-disturbed apply only with --history")
    return ReportRequest(list(paths), output or Path.cwd() / "report.html", json, markdown)


@dataclass(frozen=True)
class Reported:
    """A run's or an A/B's report: the sides it shows (baseline first), the files written,
    what differs between the sides' environments (None for one side)."""

    sides: list[str]
    written: list[Path]
    environment: EnvDiff | None = None


@dataclass(frozen=True)
class HistoryReported:
    """The history's page: its series×metric panels, their change points, the files
    written."""

    panels: int
    changes: int
    written: list[Path]


def report_corpus(request: CorpusReportRequest, world: World) -> CorpusReport:
    """The corpus report (exit_code 1: a regression or a broken KPI), its files written."""
    return corpus_page(request, world)


def report(request: ReportRequest | HistoryPageRequest, world: World
           ) -> Reported | HistoryReported:
    if isinstance(request, HistoryPageRequest):
        panels = history_page(request, world)
        return HistoryReported(len(panels), sum(len(p.changes) for p in panels),
                               [p for p in (request.html, request.json) if p])
    made = write_report(request)
    return Reported([s.name for s in made.sources],
                    [p for p in (request.html, request.json, request.markdown) if p],
                    made.environment)
