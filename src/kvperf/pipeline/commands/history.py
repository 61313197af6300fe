"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import HistoryRequest
from kvperf.store.history import COMMON_METRICS, check_metric, parse_where


def history_request(*, last: int, shas: tuple[str, str] | None, metrics: tuple[str, ...],
                    where: tuple[str, ...], json: bool, store: StoreFlags,
                    include_disturbed: bool = False) -> HistoryRequest:
    if last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    names = (tuple(check_metric(m) for m in metrics) if metrics
             else tuple(COMMON_METRICS) if shas else ("rps",))
    return HistoryRequest(names, parse_where(where), store_request(store), last, shas, json,
                          include_disturbed)
