"""The ``change_points`` table: the latest change-point list, for dashboards.

``kvperf regressions --store`` replaces the whole table in one transaction (detection runs
over the whole history, and a change point can move as commits are added), so a dashboard
never sees a half-written list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, insert

from kvperf.results.row import SeriesParams
from kvperf.store.schema import change_points


@dataclass(frozen=True)
class StoredChangePoint:
    """One row of ``change_points`` (the columns, flat)."""

    series_key: str
    metric: str
    params: SeriesParams
    direction: str
    magnitude: float
    pvalue: float
    before_mean: float
    after_mean: float
    last_before_sha: str
    first_after_sha: str
    first_after_at: datetime | None


def replace_all(engine: Engine, points: Sequence[StoredChangePoint]) -> int:
    """Delete every stored change point and insert ``points``, atomically; returns the count."""
    now = datetime.now(UTC)
    rows = [{"series_key": p.series_key, "metric": p.metric,
             "command": p.params.get("command"), "params": p.params,
             "direction": p.direction, "magnitude": p.magnitude, "pvalue": p.pvalue,
             "before_mean": p.before_mean, "after_mean": p.after_mean,
             "last_before_sha": p.last_before_sha, "first_after_sha": p.first_after_sha,
             "first_after_at": p.first_after_at, "detected_at": now} for p in points]
    with engine.begin() as conn:
        conn.execute(delete(change_points))
        if rows:
            conn.execute(insert(change_points), rows)
    return len(rows)
