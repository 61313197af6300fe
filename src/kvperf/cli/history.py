"""`kvperf history`: per-series values per revision, or the % change between two revisions."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from rich.console import Console

from kvperf.analysis.comparison import compare_summaries
from kvperf.cli._store import add_store_options, opened_store, store_name
from kvperf.core.errors import UsageError
from kvperf.report.comparison import verdict_text
from kvperf.report.history import (
    CellIndex,
    change_table,
    history_table,
    index,
    series_order,
)
from kvperf.store.history import (
    COMMON_METRICS,
    Cell,
    check_metric,
    latest_revisions,
    parse_where,
    resolve_revision,
    series_fields,
)
from kvperf.store.history import cells as query_cells


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "history", help="per-series results over commits from the database",
        description="Per series (command and parameters): the mean over trials, n and CV of "
                    "each revision (commit, or label when no commit was given); with --sha A "
                    "B the % change per metric between two revisions and its verdict (the "
                    "rule of compare-results, from the stored means and sds).")
    p.add_argument("--last", type=int, default=10, help="newest revisions to show (default 10)")
    p.add_argument("--sha", nargs=2, metavar=("A", "B"),
                   help="compare two revisions (sha prefixes or labels): %% change per metric")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help="filter series, e.g. command=SET pipeline=16 tls=no (repeatable)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="metric(s) to show (default: rps; with --sha: rps, latencies, CPU)")
    p.add_argument("--json", action="store_true", help="print the cells as JSON")
    add_store_options(p)
    p.set_defaults(handler=handle)


def _metrics(args: argparse.Namespace) -> list[str]:
    if args.metric:
        return [check_metric(m) for m in args.metric]
    return list(COMMON_METRICS) if args.sha else ["rps"]


def _json(cells: list[Cell]) -> str:
    def clean(x: float) -> float | None:
        return None if math.isnan(x) else x
    return json.dumps([{"series_key": c.series_key, "revision": c.revision, "metric": c.metric,
                        "n": c.n, "mean": c.mean, "sd": clean(c.sd), "cv": clean(c.cv)}
                       for c in cells], indent=1)


def _verdicts(cells: CellIndex, keys: list[str], a: str, b: str, names: list[str]
              ) -> dict[str, dict[str, str]]:
    """The verdict rule on the two revisions' stored summaries: series → metric → text."""
    items = [(key, name, (ca.n, ca.mean, ca.sd), (cb.n, cb.mean, cb.sd))
             for key in keys for name in names
             if (ca := cells.get((key, a, name))) and (cb := cells.get((key, b, name)))]
    out: dict[str, dict[str, str]] = {}
    for (key, name, _, _), d in zip(items, compare_summaries(items), strict=True):
        out.setdefault(key, {})[name] = verdict_text(d)
    return out


def handle(args: argparse.Namespace, console: Console) -> int:
    if args.last < 1:
        raise UsageError(f"--last must be at least 1, got {args.last}")
    names, where = _metrics(args), parse_where(args.where)
    out = Console(width=None if sys.stdout.isatty() else 200)
    with opened_store(args) as engine:
        if args.sha:
            a, b = (resolve_revision(engine, s) for s in args.sha)
            found = query_cells(engine, [a, b], names, where)
        else:
            revisions = latest_revisions(engine, args.last, where)
            found = query_cells(engine, [r.name for r in revisions], names, where)
        fields = series_fields(engine, sorted({c.series_key for c in found}))
    if args.json:
        out.print_json(_json(found))
        return 0
    if not found:
        console.print(f"no results in {store_name(args)} match", highlight=False)
        return 0
    cells = index(found)
    verdicts = _verdicts(cells, series_order(found, fields), a, b, names) if args.sha else {}
    for key in series_order(found, fields):
        if args.sha:
            out.print(change_table(key, fields[key], a, b, cells, names, verdicts.get(key)))
        else:
            out.print(history_table(key, fields[key], revisions, cells, names))
    return 0
