"""`kvperf history`: per series, the stored values of the last revisions, or the % change
between two revisions with its verdict (the rule of compare-results on the stored means and
sds). ``history_request`` checks the flags before the database is opened; ``history`` reads
it (pipeline/read/stored.py) and returns what the CLI shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvperf.analysis.envdiff import EnvDiff
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.read.stored import history as read_history
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import HistoryRequest
from kvperf.pipeline.world import World
from kvperf.report.history import CellIndex
from kvperf.results.row import SeriesParams
from kvperf.store.history import COMMON_METRICS, Cell, Revision, check_metric, parse_where


def history_request(*, last: int, shas: tuple[str, str] | None, metrics: tuple[str, ...],
                    where: tuple[str, ...], json: bool, store: StoreFlags,
                    include_disturbed: bool = False) -> HistoryRequest:
    if last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    names = (tuple(check_metric(m) for m in metrics) if metrics
             else tuple(COMMON_METRICS) if shas else ("rps",))
    return HistoryRequest(names, parse_where(where), store_request(store), last, shas, json,
                          include_disturbed)


@dataclass(frozen=True)
class Histories:
    """What `kvperf history` shows: the cells found (indexed too), the series in display
    order with their fields, the revisions shown — or the two compared (``pair``) with each
    series' verdict per metric — and the disturbed trials the cells leave out; what differs
between the pair's environments, or the shown revisions where the environment changed."""

    database: str
    metrics: tuple[str, ...]
    found: list[Cell]
    cells: CellIndex
    series: list[str]
    fields: dict[str, SeriesParams]
    revisions: list[Revision]
    pair: tuple[str, str] | None
    verdicts: dict[str, dict[str, str]]
    left_out: int
    environment: EnvDiff | None = None  # the pair's environment diff
    env_changes: dict[str, str] = field(default_factory=dict)  # revision → what changed


def history(request: HistoryRequest, world: World) -> Histories:
    view = read_history(request, world)
    return Histories(request.store.name, request.metrics, view.found, view.cells,
                     view.series, view.fields, view.revisions, view.pair, view.verdicts,
                     view.left_out, view.environment, view.env_changes)
