"""`kvperf regressions`: change points of the stored history (E-Divisive means + t-test).

Per series (command and parameters) and metric: one value per commit (the mean of its
trials), commits in commit-time order, change points with magnitude, direction and the
commit range that contains them. ``--store`` also writes them to the ``change_points``
table (replaced as a whole) for the Grafana regressions panel.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import (
    DEFAULT_MAX_PVALUE,
    DEFAULT_METRICS,
    Thresholds,
    find_all,
)
from kvperf.analysis.stored import to_series, to_stored
from kvperf.cli._store import add_series_filters, add_store_options, opened_store, store_name
from kvperf.cli.bisect import (
    add_change_point_arguments,
    bisect_change_points,
    check_change_point_flags,
)
from kvperf.core.errors import UsageError
from kvperf.report.regressions import finding_json, findings_table
from kvperf.store.changepoints import replace_all
from kvperf.store.history import check_metric, parse_where
from kvperf.store.series import History, histories


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "regressions", help="change points of the stored history, per series and metric",
        description="E-Divisive means with a pooled t-test (the Hunter/Otava method) over one "
                    "value per commit per series; lists each change point with its magnitude, "
                    "direction (higher rps is better, lower latency and CPU are better) and "
                    "the commit range it lies in.")
    p.add_argument("--since", metavar="DATE",
                   help="only change points whose first new commit is at/after DATE "
                        "(ISO date or time; the whole history is still used to detect them)")
    add_series_filters(p, DEFAULT_METRICS)
    p.add_argument("--max-pvalue", type=float, default=DEFAULT_MAX_PVALUE,
                   help=f"significance of a change point (default {DEFAULT_MAX_PVALUE})")
    p.add_argument("--min-magnitude", type=float, metavar="FRACTION",
                   help="smallest change reported, e.g. 0.03 (default: the metric's minimum "
                        "effect, 2%% throughput, 5%% latency)")
    p.add_argument("--window", type=int, help="sliding window in commits (default: whole series)")
    p.add_argument("--regressions-only", action="store_true", help="hide improvements")
    p.add_argument("--json", action="store_true", help="print the change points as JSON")
    p.add_argument("--store", action="store_true",
                   help="also replace the change_points table (Grafana's regressions panel)")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when a regression is listed")
    add_store_options(p)
    add_change_point_arguments(p)
    p.set_defaults(handler=handle)


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


def thresholds(args: argparse.Namespace) -> Thresholds:
    if not 0.0 < args.max_pvalue < 1.0:
        raise UsageError(f"--max-pvalue must be in (0, 1), got {args.max_pvalue}")
    if args.min_magnitude is not None and args.min_magnitude < 0:
        raise UsageError(f"--min-magnitude must be >= 0, got {args.min_magnitude}")
    if args.window is not None and args.window < 2 * MIN_SEGMENT:
        raise UsageError(f"--window must be at least {2 * MIN_SEGMENT}, got {args.window}")
    return Thresholds(args.max_pvalue, args.min_magnitude, args.window)


def unchecked_note(every: list[History], checked: list[History], where: str) -> str | None:
    """Why histories were not checked: none stored, or too few revisions."""
    if not every:
        return (f"no history in {where} for these metrics and filters: record results with "
                "`kvperf run` (with --commit, one revision per commit) first")
    short = len(every) - len(checked)
    if not short:
        return None
    most = max(len(h.means) for h in every if len(h.means) < 2 * MIN_SEGMENT)
    return (f"{short} histories not checked: fewer than {2 * MIN_SEGMENT} revisions (the "
            f"longest has {most}); a change point needs {MIN_SEGMENT} revisions on each side")


def handle(args: argparse.Namespace, console: Console) -> int:
    check_change_point_flags(args)
    since, limits = parse_since(args.since), thresholds(args)
    metrics = [check_metric(m) for m in (args.metric or DEFAULT_METRICS)]
    where = parse_where(args.where)
    name = store_name(args)
    with opened_store(args) as engine:
        every_history = histories(engine, metrics, where, min_points=1)
        found = [h for h in every_history if len(h.means) >= 2 * MIN_SEGMENT]
        every = find_all((to_series(h) for h in found), limits)
        if args.store:  # the whole list: dashboards filter by time themselves
            stored = replace_all(engine, [to_stored(f) for f in every])
            console.print(f"stored {stored} change point(s) in {name}", highlight=False)
    shown = [f for f in every if (since is None or f.first_after.at >= since)
             and (f.direction == "regression" or not args.regressions_only)]
    if args.json:
        sys.stdout.write(json.dumps([finding_json(f) for f in shown], indent=2) + "\n")
    else:
        out = Console(width=None if sys.stdout.isatty() else 220)
        out.print(findings_table(shown) if shown else "no change points")
        out.print(f"{len(found)} series×metric histories checked "
                  f"({', '.join(metrics)}); {len(shown)} change point(s) listed")
        why_not = unchecked_note(every_history, found, name)
        if why_not:
            out.print(why_not, highlight=False)
        if args.bisect:
            bisect_change_points(args, shown, console, out)
    regressed = any(f.direction == "regression" for f in shown)
    return 1 if regressed and args.fail_on_regression else 0
