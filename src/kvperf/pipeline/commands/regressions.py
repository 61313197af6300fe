"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from datetime import UTC, datetime

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import DEFAULT_METRICS, Thresholds
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import change_point_base, store_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import ChangePointFlags, RegressionsRequest
from kvperf.store.history import check_metric, parse_where


def parse_since(text: str | None) -> datetime | None:
    """ISO date or date-time → aware datetime (UTC when no zone is given)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: expected an ISO date such as 2025-06-01 or "
                         "2025-06-01T12:00") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def thresholds(max_pvalue: float, min_magnitude: float | None, window: int | None
               ) -> Thresholds:
    if not 0.0 < max_pvalue < 1.0:
        raise UsageError(f"--max-pvalue must be in (0, 1), got {max_pvalue}")
    if min_magnitude is not None and min_magnitude < 0:
        raise UsageError(f"--min-magnitude must be >= 0, got {min_magnitude}")
    if window is not None and window < 2 * MIN_SEGMENT:
        raise UsageError(f"--window must be at least {2 * MIN_SEGMENT}, got {window}")
    return Thresholds(max_pvalue, min_magnitude, window)


def regressions_request(*, since: str | None, metrics: tuple[str, ...],
                        where: tuple[str, ...], max_pvalue: float,
                        min_magnitude: float | None, window: int | None,
                        regressions_only: bool, json: bool, write: bool,
                        fail_on_regression: bool, store: StoreFlags,
                        bisect: ChangePointFlags,
                        include_disturbed: bool = False) -> RegressionsRequest:
    if bisect.bisect and json:
        raise UsageError("--bisect does not apply with --json (its steps and answers are "
                         "printed as text)")
    base = (change_point_base(config=bisect.config, runs=bisect.runs,
                              max_runs=bisect.max_runs, build=bisect.build, store=store)
            if bisect.bisect else None)
    when, limits = parse_since(since), thresholds(max_pvalue, min_magnitude, window)
    names = tuple(check_metric(m) for m in metrics or DEFAULT_METRICS)
    return RegressionsRequest(names, parse_where(where), limits, store_request(store), when,
                              regressions_only, json, write, fail_on_regression, base,
                              include_disturbed)
