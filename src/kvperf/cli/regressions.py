"""`kvperf regressions`: change points of the stored history (E-Divisive means + t-test).

Per series (command and parameters) and metric: one value per commit (the mean of its
trials), commits in commit-time order, change points with magnitude, direction and the
commit range that contains them. ``--store`` also writes them to the ``change_points``
table (replaced as a whole) for the Grafana regressions panel; ``--bisect`` bisects each
listed one (pipeline/commands/regressions.py `regressions`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._disturbed import add_include_disturbed
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_series_filters, add_store_options, store_flags
from kvperf.core.kinds import Measure
from kvperf.pipeline.commands.regressions import (
    BUDGET_FACTOR,
    DEFAULT_MAX_PVALUE,
    DEFAULT_METRICS,
    DEFAULT_RUNS,
    Regressions,
    regressions,
    regressions_request,
)
from kvperf.pipeline.request.stored import ChangePointFlags, RegressionsRequest
from kvperf.report.regressions import (
    finding_json,
    findings_table,
    left_out_note,
    unchecked_note,
    unstable_json,
    unstable_table,
)


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
                   help="also replace the change_points table (Grafana's regressions panel) "
                        "and record new change points as alerts (kvperf alerts)")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when a regression is listed")
    p.add_argument("--unstable", action="store_true",
                   help="list the unstable series instead: those whose A/A noise (the spread "
                        "between consecutive commits without a change point) exceeds their "
                        "minimum effect; their change points are left out otherwise")
    p.add_argument("--include-unstable", action="store_true",
                   help="list (and --store) the change points of unstable series too")
    p.add_argument("--noise-run", type=local_path, action="append", default=[],
                   metavar="DIR",
                   help="a `kvperf noise` results directory (A/ and B/): its measured A/A "
                        "spread replaces the history's for the series it ran (repeatable)")
    add_store_options(p)
    _add_bisect_arguments(p)
    add_include_disturbed(p)
    p.set_defaults(handler=handle)


def _add_bisect_arguments(p: argparse.ArgumentParser) -> None:
    """`kvperf regressions --bisect`: the flags its bisections need."""
    g = p.add_argument_group("bisect (with --bisect)")
    g.add_argument("--bisect", action="store_true",
                   help="bisect each listed change point whose range spans unmeasured "
                        "commits (timing, the change point's metric and series; needs --repo "
                        "and the config the history ran with, --config)")
    g.add_argument("--config", type=local_path, help="JSON config of the bisections")
    g.add_argument("--runs", type=int, help=f"runs per side per step (default "
                                            f"{DEFAULT_RUNS[Measure.TIMING]})")
    g.add_argument("--max-runs", type=int, help="runs per side before an inconclusive "
                                                f"step is skipped (default {BUDGET_FACTOR} × "
                                                "--runs)")
    add_build_args(p)


def request(args: argparse.Namespace) -> RegressionsRequest:
    """argv's flags → the checked request (UsageError, exit 2, before the store is read)."""
    return regressions_request(
        since=args.since, metrics=tuple(args.metric or ()), where=tuple(args.where),
        max_pvalue=args.max_pvalue, min_magnitude=args.min_magnitude, window=args.window,
        regressions_only=args.regressions_only, json=args.json, write=args.store,
        fail_on_regression=args.fail_on_regression, store=store_flags(args),
        include_disturbed=args.include_disturbed, unstable=args.unstable,
        include_unstable=args.include_unstable, noise_runs=tuple(args.noise_run),
        bisect=ChangePointFlags(args.bisect, args.config, args.runs, args.max_runs,
                                build_flags(args)))


def _listed(cli: Cli, asked: RegressionsRequest, found: Regressions) -> None:
    """The change points (before any bisection), as a table or JSON."""
    if found.stored is not None:
        cli.err.print(f"stored {found.stored} change point(s) in {found.database}",
                      highlight=False)
    if found.alerts is not None:
        moved = (f", {len(found.alerts.moved)} whose change point moved "
                 f"({len(found.alerts.superseded)} resolved invalid)"
                 if found.alerts.moved else "")
        cli.err.print(f"alerts: {len(found.alerts.summaries)} new summary(ies), "
                      f"{found.alerts.alerts} new alert(s){moved} (kvperf alerts list)",
                      highlight=False)
    shown, out = found.shown, cli.out
    if asked.unstable:
        _unstable(cli, asked, found)
        return
    if asked.json:
        sys.stdout.write(json.dumps([finding_json(f) for f in shown], indent=2) + "\n")
        return
    out.print(findings_table(shown) if shown else "no change points")
    out.print(f"{len(found.checked)} series×metric histories checked "
              f"({', '.join(found.metrics)}); {len(shown)} change point(s) listed")
    for note in (left_out_note(found.left_out, len(found.unstable)),
                 unchecked_note(found.every, found.checked, found.database)):
        if note:
            out.print(note, highlight=False)


def _unstable(cli: Cli, asked: RegressionsRequest, found: Regressions) -> None:
    """--unstable: the series whose noise exceeds their minimum effect."""
    if asked.json:
        sys.stdout.write(json.dumps([unstable_json(u) for u in found.unstable], indent=2)
                         + "\n")
        return
    cli.out.print(unstable_table(found.unstable) if found.unstable else "no unstable series")
    cli.out.print(f"{len(found.checked)} series×metric histories checked "
                  f"({', '.join(found.metrics)}); {len(found.unstable)} unstable")


def handle(args: argparse.Namespace, cli: Cli) -> int:
    asked = request(args)
    found = regressions(asked, cli.world, ConsoleHooks(cli),
                        lambda listed: _listed(cli, asked, listed))
    return found.exit_code
