"""`kvperf regressions`' read side: the stored histories → change points (E-Divisive
means + t-test, analysis/regressions.py), written to the ``change_points`` table when asked
(replaced as a whole), and recorded as alerts (store/alerts.py: only the new ones are
added). Bisecting the listed ones on the live bench (``--bisect``) is
pipeline/bisect.py's ``bisect_change_points``."""

from __future__ import annotations

from dataclasses import dataclass

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import Finding, find_all
from kvperf.analysis.stored import to_series, to_stored
from kvperf.pipeline.request.stored import RegressionsRequest
from kvperf.pipeline.world import World
from kvperf.store.alerts import Recorded, record
from kvperf.store.changepoints import replace_all
from kvperf.store.series import History, histories


@dataclass
class ChangePoints:
    """Every history read, those long enough to hold a change point, the change points
    found in them, those listed (--since, --regressions-only), and how many were stored."""

    every: list[History]
    checked: list[History]
    found: list[Finding]
    shown: list[Finding]
    stored: int | None = None
    alerts: Recorded | None = None


def change_points(request: RegressionsRequest, world: World) -> ChangePoints:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        every = histories(engine, list(request.metrics), request.where, min_points=1,
                          include_disturbed=request.include_disturbed)
        checked = [h for h in every if len(h.means) >= 2 * MIN_SEGMENT]
        found = find_all((to_series(h) for h in checked), request.limits)
        rows = [to_stored(f) for f in found]
        stored = (replace_all(engine, rows) if request.write
                  else None)  # the whole list: dashboards filter by time themselves
        recorded = record(engine, rows) if request.write else None
    since = request.since
    shown = [f for f in found if (since is None or f.first_after.at >= since)
             and (f.direction == "regression" or not request.regressions_only)]
    return ChangePoints(every, checked, found, shown, stored, recorded)
