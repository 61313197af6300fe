"""Per-series histories for change-point detection: one value per commit per series per metric.

Each value is the mean of a revision's ok trials, read from ``metric_summary`` (sum / n per
series, revision and metric, maintained on write), so no stored value is aggregated here.
A revision is placed in time by its commit's ``committed_at`` (the ``commits`` table, filled
by ``kvperf track determine``), falling back to its first trial's timestamp, so histories
follow commit order, not the order runners measured them in.

On PostgreSQL one query returns each (series, metric) history as parallel arrays (revision
positions, means and counts; unordered, so PostgreSQL needs no sort, and put in commit order
here), so 10 million stored values arrive as a few thousand rows instead of
millions of cells; SQLite goes through the generic per-cell aggregates (store.history.cells).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, bindparam, func, select, text

from kvperf.results.row import SeriesParams
from kvperf.store.history import (
    _filters,
    cells,
    fetch_rows,
    series_fields,
    series_filter,
    summary_source,
)
from kvperf.store.schema import commits, trials

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class History:
    """One metric of one series in commit-time order: parallel revisions, times, means and
    trial counts."""

    series_key: str
    params: SeriesParams
    metric: str
    revisions: npt.NDArray[Any]  # of str
    times: npt.NDArray[Any]  # of datetime
    means: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]


def _aware(value: datetime | None) -> datetime:
    if value is None:
        return EPOCH
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def revision_order(engine: Engine, where: SeriesParams,
                   include_disturbed: bool = False) -> list[tuple[str, datetime]]:
    """Every revision with ok trials (matching ``where``) and its time — its commit's
    committed_at, else its first trial's timestamp — ordered by (time, revision)."""
    when = func.coalesce(func.max(commits.c.committed_at), func.min(trials.c.timestamp))
    query = (select(trials.c.revision, when.label("when"))
             .select_from(trials.outerjoin(commits, commits.c.sha == trials.c.revision))
             .where(_filters(where, include_disturbed)).group_by(trials.c.revision))
    with engine.connect() as conn:
        found = [(str(r.revision), _aware(r.when)) for r in conn.execute(query)]
    return sorted(found, key=lambda rw: (rw[1], rw[0]))


_PG_ARRAYS = """
WITH pos AS (SELECT * FROM unnest(CAST(:revisions AS text[])) WITH ORDINALITY AS p(rev, i)),
agg AS (
    SELECT metric_summary.series_key, metric_summary.name, metric_summary.revision,
           metric_summary.total / metric_summary.n AS mean, metric_summary.n AS n
    FROM {source}
    WHERE {where} AND metric_summary.name = ANY(CAST(:names AS text[])))
SELECT a.series_key, a.name,
       array_agg(p.i - 1) AS idx, array_agg(a.mean) AS means, array_agg(a.n) AS counts
FROM agg a JOIN pos p ON p.rev = a.revision
GROUP BY a.series_key, a.name
HAVING count(*) >= :min_points
"""


def _pg_rows(engine: Engine, revisions: list[str], metrics: Sequence[str],
             where: SeriesParams, min_points: int,
             include_disturbed: bool = False) -> list[tuple[str, str, Any, Any, Any]]:
    source = summary_source(include_disturbed)
    condition = series_filter(where, source, include_disturbed)
    with engine.connect() as conn:
        literal = {"literal_binds": True}
        where_sql = str(condition.compile(conn, compile_kwargs=literal))
        source_sql = ("metric_summary" if not include_disturbed else
                      f"({source.element.compile(conn, compile_kwargs=literal)}) "  # type: ignore[attr-defined]
                      "AS metric_summary")
        # room to group 2M summary rows into histories without spilling to disk
        conn.execute(text("SET LOCAL work_mem = '256MB'"))
        stmt = text(_PG_ARRAYS.format(where=where_sql, source=source_sql)).bindparams(
            bindparam("revisions"), bindparam("names"), bindparam("min_points"))
        result = fetch_rows(conn, stmt, {"revisions": revisions, "names": list(metrics),
                                         "min_points": min_points})
        return [(key, name, idx, means, counts) for key, name, idx, means, counts in result]


def _generic_rows(engine: Engine, revisions: list[str], metrics: Sequence[str],
                  where: SeriesParams, min_points: int,
                  include_disturbed: bool = False) -> list[tuple[str, str, Any, Any, Any]]:
    position = {rev: i for i, rev in enumerate(revisions)}
    grouped: dict[tuple[str, str], list[tuple[int, float, int]]] = defaultdict(list)
    for c in cells(engine, None, list(metrics), where, include_disturbed):
        if c.revision not in position:  # only disturbed trials measured it
            continue
        grouped[(c.series_key, c.metric)].append((position[c.revision], c.mean, c.n))
    rows = []
    for (key, metric), points in grouped.items():
        if len(points) >= min_points:
            points.sort()
            idx, means, counts = zip(*points, strict=True)
            rows.append((key, metric, idx, means, counts))
    return rows


def histories(engine: Engine, metrics: Sequence[str], where: SeriesParams | None = None,
              min_points: int = 1, include_disturbed: bool = False) -> list[History]:
    """Every (series, metric) history with at least ``min_points`` revisions, ordered by
    series key and metric; disturbed trials left out unless ``include_disturbed``."""
    where = where or {}
    order = revision_order(engine, where, include_disturbed)
    revisions = [rev for rev, _ in order]
    fetch = _pg_rows if engine.dialect.name == "postgresql" else _generic_rows
    rows = sorted(fetch(engine, revisions, metrics, where, min_points, include_disturbed),
                  key=lambda r: r[:2])
    params = series_fields(engine, sorted({r[0] for r in rows}))
    rev_array = np.array(revisions, dtype=object)
    time_array = np.array([when for _, when in order], dtype=object)
    out = []
    for key, metric, idx, means, counts in rows:
        positions = np.asarray(idx, dtype=np.int64)
        sort = np.argsort(positions, kind="stable")  # PostgreSQL's arrays come unordered
        positions = positions[sort]
        out.append(History(key, params.get(key, {}), metric, rev_array[positions],
                           time_array[positions], np.asarray(means, dtype=np.float64)[sort],
                           np.asarray(counts, dtype=np.int64)[sort]))
    return out
