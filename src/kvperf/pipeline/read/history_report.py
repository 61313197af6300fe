"""`kvperf report --history`: the stored histories and their change points → the history
page (report/history_page.py) and its JSON. Change points are `kvperf regressions`' (the same
detection and verdict rule, default thresholds), each with its alert's state when one is
recorded (store/alerts.py); the commits where the environment changed are the runs' env
compared point to point (analysis/envdiff.py)."""

from __future__ import annotations

from collections.abc import Mapping

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.envdiff import EnvChange, history_changes
from kvperf.analysis.regressions import Finding, Thresholds, series_findings
from kvperf.analysis.stored import to_series
from kvperf.core.errors import UsageError
from kvperf.pipeline.request.stored import HistoryPageRequest
from kvperf.pipeline.world import World
from kvperf.report.history_page import (
    ChangeMark,
    HistoryPanel,
    history_json,
    render_history,
)
from kvperf.report.regressions import describe_params
from kvperf.results.records import Env
from kvperf.store.alerts import states as alert_states
from kvperf.store.db import Database
from kvperf.store.environments import revision_envs
from kvperf.store.files import write_json_atomic
from kvperf.store.series import History, histories

AlertStates = dict[tuple[str, str, str, str], str]

def _marks(history: History, found: list[Finding], changed: tuple[EnvChange, ...],
           alerts: AlertStates) -> tuple[ChangeMark, ...]:
    """The change points, each with its alert's state; one at a commit where the
    environment changed says so."""
    revisions = list(history.revisions)
    labels = {e.index: e.label for e in changed}
    at = [revisions.index(f.first_after.sha) for f in found]
    return tuple(ChangeMark(i, f.direction, f.magnitude, f.pvalue, f.commit_range,
                            environment=labels.get(i),
                            alert=alerts.get((f.series_key, f.metric, f.last_before.sha,
                                              f.first_after.sha), ""))
                 for i, f in zip(at, found, strict=True))


def panel(history: History, envs: Mapping[str, list[Env]] | None = None,
          alerts: AlertStates | None = None) -> HistoryPanel:
    """One history as a panel, with its change points when it is long enough for them
    (each with its alert's state, from ``alerts``) and the commits where the environment
    changed (``envs``: revision → its runs' env)."""
    found = (series_findings(to_series(history), Thresholds())
             if len(history.means) >= 2 * MIN_SEGMENT else [])
    changed = history_changes([(envs or {}).get(str(r), []) for r in history.revisions])
    return HistoryPanel(describe_params(history.params), history.metric,
                        tuple(str(r) for r in history.revisions),
                        tuple(t.isoformat() for t in history.times),
                        tuple(float(v) for v in history.means),
                        tuple(int(n) for n in history.counts),
                        _marks(history, found, changed, alerts or {}), changed)


def history_page(request: HistoryPageRequest, world: World) -> list[HistoryPanel]:
    """The workflow: the database opened (World.store), the page written, its panels."""
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return write_history_report(engine, request)


def write_history_report(engine: Database, request: HistoryPageRequest
                         ) -> list[HistoryPanel]:
    """Write the page (and the JSON); UsageError when the database holds no such history."""
    found = histories(engine, list(request.metrics), request.where, min_points=1,
                      include_disturbed=request.include_disturbed)
    envs = revision_envs(engine, sorted({str(r) for h in found for r in h.revisions}))
    alerts = alert_states(engine)
    panels = [panel(h, envs, alerts) for h in found]
    if not panels:
        raise UsageError(f"no history in {request.source} for these metrics and filters: "
                         "record results with `kvperf run --commit …` first")
    short = sum(1 for p in panels if len(p.values) < 2 * MIN_SEGMENT)
    note = (f"{short} of {len(panels)} histories have fewer than {2 * MIN_SEGMENT} commits: "
            "too short to look for change points" if short else None)
    request.html.write_text(render_history(panels, request.source, note))
    if request.json is not None:
        write_json_atomic(request.json, history_json(panels, request.source))
    return panels

