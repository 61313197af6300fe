"""`kvperf regressions`' read side: the stored histories → change points (E-Divisive
means + t-test, analysis/regressions.py), written to the ``change_points`` table when asked
(replaced as a whole), and recorded as alerts (store/alerts.py: only the new ones are
added); change points of unstable series (analysis/unstable.py: A/A noise above the
minimum effect) are left out of the list, the table and the alerts unless asked. Bisecting
the listed ones on the live bench (``--bisect``) is pipeline/bisect.py's
``bisect_change_points``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import Finding, find_all
from kvperf.analysis.stored import to_series, to_stored
from kvperf.analysis.unstable import Unstable, measured_noise, unstable_keys, unstable_series
from kvperf.core.errors import StoreError, UsageError
from kvperf.pipeline.request.stored import RegressionsRequest
from kvperf.pipeline.world import World
from kvperf.store.alerts import Recorded, record
from kvperf.store.changepoints import replace_all
from kvperf.store.files import read_rows
from kvperf.store.series import History, histories


@dataclass
class ChangePoints:
    """Every history read, those long enough to hold a change point, the change points
    found in them, those listed (--since, --regressions-only; on unstable series only with
    --include-unstable), how many were stored, the unstable series and how many change
    points on them were left out, and (--store) the alerts recorded."""

    every: list[History]
    checked: list[History]
    found: list[Finding]
    shown: list[Finding]
    stored: int | None = None
    unstable: list[Unstable] = field(default_factory=list)
    left_out: int = 0
    alerts: Recorded | None = None  # --store: the alert summaries and alerts added


def measured(noise_runs: tuple[Path, ...]) -> dict[tuple[str, str], float] | None:
    """The A/A noise `kvperf noise` measured (--noise-run), per series and metric; the
    later directory wins for a series both measured."""
    if not noise_runs:
        return None
    found: dict[tuple[str, str], float] = {}
    for path in noise_runs:
        try:
            a, b = (read_rows(path / side / "metrics.json") for side in "AB")
        except StoreError as exc:
            raise UsageError(f"--noise-run {path}: {exc}") from None
        if not all("trial_id" in r and "run" in r for r in a + b):
            raise UsageError(f"--noise-run {path}: its rows are not an interleaved run's "
                             "(no trial_id and run to pair the rounds by)")
        found |= measured_noise(a, b)
    return found


def change_points(request: RegressionsRequest, world: World) -> ChangePoints:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        every = histories(engine, list(request.metrics), request.where, min_points=1,
                          include_disturbed=request.include_disturbed)
        checked = [h for h in every if len(h.means) >= 2 * MIN_SEGMENT]
        found = find_all((to_series(h) for h in checked), request.limits)
        unstable = unstable_series((to_series(h) for h in checked), found, request.limits,
                                   measured(request.noise_runs))
        noisy = set() if request.include_unstable else unstable_keys(unstable)
        kept = [f for f in found if (f.series_key, f.metric) not in noisy]
        rows = [to_stored(f) for f in kept]
        stored = (replace_all(engine, rows) if request.write
                  else None)  # the whole list: dashboards filter by time themselves
        recorded = record(engine, rows) if request.write else None
    since = request.since
    shown = [f for f in kept if (since is None or f.first_after.at >= since)
             and (f.direction == "regression" or not request.regressions_only)]
    return ChangePoints(every, checked, found, shown, stored, unstable,
                        len(found) - len(kept), recorded)
