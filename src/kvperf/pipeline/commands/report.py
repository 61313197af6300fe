"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from pathlib import Path

from kvperf.analysis.regressions import DEFAULT_METRICS
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import HistoryPageRequest, ReportRequest
from kvperf.store.history import check_metric, parse_where


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
