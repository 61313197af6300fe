"""`kvperf regressions`: change points of the stored history (E-Divisive means + t-test,
pipeline/read/regressions.py), per series and metric; ``--store`` also replaces the
``change_points`` table, ``--bisect`` bisects each listed one on the live bench
(pipeline/bisect.py). ``regressions_request`` checks the flags — and, with --bisect, what
the bisections need — before the database is opened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from kvperf.analysis.bisect import DEFAULT_RUNS
from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import (
    DEFAULT_MAX_PVALUE,
    DEFAULT_METRICS,
    Finding,
    Thresholds,
)
from kvperf.analysis.unstable import Unstable
from kvperf.core.errors import Interrupted, KvperfError, UsageError
from kvperf.pipeline.bisect import (
    BUDGET_FACTOR,
    BisectResult,
    ChangePointHooks,
    bisect_change_points,
)
from kvperf.pipeline.commands.alerts import DIFF_DIR, culprit_diffs
from kvperf.pipeline.commands.checks import change_point_base, store_request
from kvperf.pipeline.commands.compare import CompareHooks
from kvperf.pipeline.read.regressions import change_points
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import ChangePointFlags, RegressionsRequest
from kvperf.pipeline.world import World
from kvperf.store.alerts import Recorded, change, name_culprit
from kvperf.store.history import check_metric, parse_where
from kvperf.store.series import History

__all__ = ["BUDGET_FACTOR", "DEFAULT_MAX_PVALUE", "DEFAULT_METRICS", "DEFAULT_RUNS",
           "Regressions", "parse_since", "regressions", "regressions_request", "thresholds"]


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
                        include_disturbed: bool = False, unstable: bool = False,
                        include_unstable: bool = False, noise_runs: tuple[Path, ...] = ()
                        ) -> RegressionsRequest:
    if bisect.bisect and json:
        raise UsageError("--bisect does not apply with --json (its steps and answers are "
                         "printed as text)")
    if unstable and (bisect.bisect or write or fail_on_regression):
        raise UsageError("--unstable lists the unstable series, not change points: "
                         "--bisect, --store and --fail-on-regression do not apply")
    base = (change_point_base(config=bisect.config, runs=bisect.runs,
                              max_runs=bisect.max_runs, build=bisect.build, store=store)
            if bisect.bisect else None)
    when, limits = parse_since(since), thresholds(max_pvalue, min_magnitude, window)
    names = tuple(check_metric(m) for m in metrics or DEFAULT_METRICS)
    return RegressionsRequest(names, parse_where(where), limits, store_request(store), when,
                              regressions_only, json, write, fail_on_regression, base,
                              include_disturbed, unstable, include_unstable,
                              tuple(_noise_run(p) for p in noise_runs))


def _noise_run(path: Path) -> Path:
    """A `kvperf noise` results directory: its sides A/ and B/ each with a metrics.json."""
    if not all((path / side / "metrics.json").is_file() for side in "AB"):
        raise UsageError(f"--noise-run {str(path)!r}: not a `kvperf noise` results directory "
                         "(A/metrics.json and B/metrics.json)")
    return path


@dataclass(frozen=True)
class Regressions:
    """What `kvperf regressions` lists: every history read (``every``), those long enough
    to hold a change point (``checked``), the change points listed (--since,
    --regressions-only), how many were stored (--store), in which database; 1 with
    --fail-on-regression when a regression is listed. The unstable series, and how many
    change points on them were left out (none with --include-unstable)."""

    database: str
    metrics: tuple[str, ...]
    every: list[History]
    checked: list[History]
    shown: list[Finding]
    stored: int | None
    exit_code: int
    unstable: list[Unstable] = field(default_factory=list)
    left_out: int = 0
    alerts: Recorded | None = None  # --store: the alert summaries and alerts added


class RegressionsHooks(ChangePointHooks, CompareHooks, Protocol):
    """The bisections' hooks, and the culprit's compare's."""


def regressions(request: RegressionsRequest, world: World, hooks: RegressionsHooks,
                listed: Callable[[Regressions], None]) -> Regressions:
    """The change points found (and stored), ``listed`` told; then, with --bisect, each
    listed one bisected on the live bench (its steps told to ``hooks``)."""
    found = change_points(request, world)
    regressed = any(f.direction == "regression" for f in found.shown)
    outcome = Regressions(request.store.name, request.metrics, found.every, found.checked,
                          found.shown, found.stored,
                          1 if regressed and request.fail_on_regression else 0,
                          found.unstable, found.left_out, found.alerts)
    listed(outcome)
    if request.bisect is not None:
        done = bisect_change_points(request.bisect, found.shown, world, hooks)
        _name_culprits(request, world, done, hooks)
    return outcome


def _name_culprits(request: RegressionsRequest, world: World,
                   done: list[tuple[Finding, BisectResult]], hooks: RegressionsHooks) -> None:
    """Each bisection that named a first bad commit moves its range's alert (if stored) to
    ``culprit``, with the commit, its parent (the last good one) and the log; then the
    culprit's instruction diff and differential flamegraphs are made beside the log
    (pipeline/commands/alerts.py ``culprit_diffs``)."""
    assert request.store.url is not None and request.bisect is not None
    named = [(f, r) for f, r in done if r.differ and r.log.outcome().found]
    alerted = []
    with world.database(request.store.url) as engine:
        for f, r in named:
            out = r.log.outcome()
            culprit, parent = r.log.commits[out.bad].sha, r.log.commits[out.good].sha
            summary = name_culprit(engine, f.last_before.sha, f.first_after.sha, culprit,
                                   parent, str((r.directory / "bisect.json").resolve()))
            if summary is not None:
                alerted.append((summary, r, culprit, parent))
    for summary, r, culprit, parent in alerted:
        try:
            culprit_diffs(request.bisect, r.log, culprit, parent, world, hooks,
                          r.directory.resolve() / DIFF_DIR)
        except KvperfError as exc:  # the culprit stays named; the alert says what failed
            if isinstance(exc, Interrupted):
                raise
            with world.database(request.store.url) as engine:
                change(engine, summary, "note",
                       note=f"the culprit's instruction compare failed: {exc}")
