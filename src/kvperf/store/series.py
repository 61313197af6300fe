"""Per-series histories for change-point detection: one value per commit per series per metric.

Built on the history aggregates (``store.history.cells``: the mean of a revision's ok trials,
computed in the database). A revision is placed in time by its commit's ``committed_at``
(the ``commits`` table, filled by ``kvperf track determine``), falling back to its first
trial's timestamp, so histories follow commit order, not the order runners measured them in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, select

from kvperf.store.history import cells, series_fields
from kvperf.store.schema import commits, trials

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Point:
    """One revision of a series: when (commit time), mean over its trials, trial count."""

    revision: str
    when: datetime
    mean: float
    n: int


@dataclass(frozen=True)
class History:
    """One metric of one series, points in commit-time order."""

    series_key: str
    params: dict[str, Any]
    metric: str
    points: list[Point]


def _aware(value: datetime | None) -> datetime:
    if value is None:
        return EPOCH
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def revision_times(engine: Engine) -> dict[str, datetime]:
    """Each revision's time: its commit's committed_at, else its first ok trial's timestamp."""
    when = func.coalesce(func.max(commits.c.committed_at), func.min(trials.c.timestamp))
    query = (select(trials.c.revision, when.label("when"))
             .select_from(trials.outerjoin(commits, commits.c.sha == trials.c.revision))
             .where(trials.c.status == "ok").group_by(trials.c.revision))
    with engine.connect() as conn:
        return {r.revision: _aware(r.when) for r in conn.execute(query)}


def histories(engine: Engine, metrics: Sequence[str], where: dict[str, Any] | None = None,
              min_points: int = 1) -> list[History]:
    """Every (series, metric) history with at least ``min_points`` revisions, ordered by
    series key and metric; points ordered by (time, revision)."""
    times = revision_times(engine)
    grouped: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for c in cells(engine, None, list(metrics), where or {}):
        grouped[(c.series_key, c.metric)].append(
            Point(c.revision, times.get(c.revision, EPOCH), c.mean, c.n))
    kept = {k: v for k, v in grouped.items() if len(v) >= min_points}
    params = series_fields(engine, sorted({key for key, _ in kept}))
    return [History(key, params.get(key, {}), metric,
                    sorted(points, key=lambda p: (p.when, p.revision)))
            for (key, metric), points in sorted(kept.items())]
