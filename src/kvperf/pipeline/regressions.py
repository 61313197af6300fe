"""`kvperf regressions` as a workflow: the stored histories → change points (E-Divisive
means + t-test, analysis/regressions.py), written to the ``change_points`` table when asked
(replaced as a whole); and each listed change point bisected on the live bench
(pipeline/bisect.py ``change_point_request``), in its own results directory."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from kvperf.analysis.bisect import series_text
from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import Finding, find_all
from kvperf.analysis.stored import to_series, to_stored
from kvperf.pipeline.bisect import (
    BisectHooks,
    BisectRequest,
    BisectResult,
    ChangePoint,
    LiveBench,
    bisect,
    change_point_request,
)
from kvperf.pipeline.request.stored import RegressionsRequest
from kvperf.pipeline.world import World
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


def change_points(request: RegressionsRequest, world: World) -> ChangePoints:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        every = histories(engine, list(request.metrics), request.where, min_points=1)
        checked = [h for h in every if len(h.means) >= 2 * MIN_SEGMENT]
        found = find_all((to_series(h) for h in checked), request.limits)
        stored = (replace_all(engine, [to_stored(f) for f in found]) if request.write
                  else None)  # the whole list: dashboards filter by time themselves
    since = request.since
    shown = [f for f in found if (since is None or f.first_after.at >= since)
             and (f.direction == "regression" or not request.regressions_only)]
    return ChangePoints(every, checked, found, shown, stored)


class ChangePointHooks(BisectHooks, Protocol):
    def not_bisected(self, what: str, why: str) -> None: ...

    def bisecting(self, what: str) -> None: ...

    def bisected(self, what: str, result: BisectResult) -> None: ...


def bisect_change_points(base: BisectRequest, findings: Iterable[Finding], world: World,
                         hooks: ChangePointHooks) -> None:
    """Bisect every change point whose range holds unmeasured commits (resumed when its
    log exists); the batches' stores checked at the end."""
    findings = list(findings)
    if not findings:
        return
    bench = LiveBench(base, world, hooks)
    for f in findings:
        point = ChangePoint(f.last_before.sha, f.first_after.sha, series_text(f.params),
                            f.metric)
        what = f"{point.series} {point.metric} {f.commit_range}"
        request = change_point_request(base, point, bench)
        if isinstance(request, str):
            hooks.not_bisected(what, request)
            continue
        hooks.bisecting(what)
        hooks.bisected(what, bisect(request, bench, hooks))
    bench.check_stores()
