"""The commands over the results database as workflows — history's cells and verdicts,
track's queue actions, db push and migrate — each opening the store once (World.store) and
disposing it; and compare-results over two metrics.json files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.analysis.comparison import (
    GroupKey,
    MetricComparison,
    compare,
    compare_summaries,
)
from kvperf.analysis.envdiff import EnvDiff, env_diff, flatten, history_changes, rows_env_diff
from kvperf.analysis.sequential import SeriesStop, recorded_stops
from kvperf.clients.checkout import client_named
from kvperf.core.errors import StoreError, UsageError
from kvperf.core.redact import redact_urls
from kvperf.pipeline.request.common import StoreRequest
from kvperf.pipeline.request.stored import (
    CompareResultsRequest,
    DbPushRequest,
    HistoryRequest,
    TrackClaimRequest,
    TrackCleanupRequest,
    TrackDetermineRequest,
    TrackMarkRequest,
    TrackQueryRequest,
    TrackRenewRequest,
    TrackStatusRequest,
)
from kvperf.pipeline.world import World
from kvperf.report.comparison import markdown, stops_markdown, verdict_text
from kvperf.report.envdiff import markdown as environment_markdown
from kvperf.report.history import CellIndex, index, series_order, short
from kvperf.results.row import Row, SeriesParams
from kvperf.sourcebuild.git_log import branch_commits
from kvperf.store import track
from kvperf.store.db import database_errors, make_engine
from kvperf.store.environments import revision_envs
from kvperf.store.files import read_rows
from kvperf.store.history import (
    Cell,
    Revision,
    cells,
    disturbed_count,
    latest_revisions,
    resolve_revision,
    series_fields,
)
from kvperf.store.migrations import migrate
from kvperf.store.push import PushResult, push_file


@dataclass
class HistoryView:
    """What `kvperf history` shows: the cells, each series' fields, the revisions shown
    (or the two compared, with each series' verdict per metric)."""

    found: list[Cell]
    fields: dict[str, SeriesParams]
    revisions: list[Revision] = field(default_factory=list)
    pair: tuple[str, str] | None = None
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)
    left_out: int = 0  # disturbed trials (of the compared revisions) the cells leave out
    environment: EnvDiff | None = None  # the pair: what differs between their runs' envs
    env_changes: dict[str, str] = field(default_factory=dict)  # revision → what changed

    @property
    def cells(self) -> CellIndex:
        return index(self.found)

    @property
    def series(self) -> list[str]:
        return series_order(self.found, self.fields)


def history(request: HistoryRequest, world: World) -> HistoryView:
    assert request.store.url is not None
    names, where, every = list(request.metrics), request.where, request.include_disturbed
    with world.database(request.store.url) as engine:
        if request.shas:
            a, b = (resolve_revision(engine, s) for s in request.shas)
            found = cells(engine, [a, b], names, where, every)
            revisions: list[Revision] = []
        else:
            revisions = latest_revisions(engine, request.last, where, every)
            found = cells(engine, [r.name for r in revisions], names, where, every)
        fields = series_fields(engine, sorted({c.series_key for c in found}))
        # the two revisions compared, or every revision (one whose trials were all
        # disturbed is not among the latest shown, but its reader wants to know)
        left_out = 0 if every else disturbed_count(engine, [a, b] if request.shas else None,
                                                   where)
        shown = [a, b] if request.shas else [r.name for r in revisions]
        envs = revision_envs(engine, shown)
    view = HistoryView(found, fields, revisions, left_out=left_out)
    if request.shas:
        view.pair = (a, b)
        view.verdicts = _verdicts(view.cells, view.series, a, b, names)
        view.environment = env_diff({short(rev): [flatten(e) for e in envs.get(rev, [])]
                                     for rev in (a, b)})
    else:
        view.env_changes = {shown[c.index]: c.label
                            for c in history_changes([envs.get(r, []) for r in shown])}
    return view


def _verdicts(found: CellIndex, keys: list[str], a: str, b: str, names: list[str]
              ) -> dict[str, dict[str, str]]:
    """The verdict rule on the two revisions' stored summaries: series → metric → text."""
    items = [(key, name, (ca.n, ca.mean, ca.sd), (cb.n, cb.mean, cb.sd))
             for key in keys for name in names
             if (ca := found.get((key, a, name))) and (cb := found.get((key, b, name)))]
    out: dict[str, dict[str, str]] = {}
    for (key, name, _, _), d in zip(items, compare_summaries(items), strict=True):
        out.setdefault(key, {})[name] = verdict_text(d)
    return out


def track_determine(request: TrackDetermineRequest, world: World
                    ) -> tuple[list[track.TrackedCommit], list[str]]:
    """The branch's last commits (git) recorded; the ids of the jobs newly enqueued."""
    name, _, path = request.repo.partition("=") if client_named(request.repo) else \
        ("", "", request.repo)
    found = branch_commits(path, request.branch, request.max_commits)
    items = [track.TrackedCommit(c.sha, c.committed_at, c.author, c.subject) for c in found]
    repo = str(Path(path).resolve()) if Path(path).is_dir() else path
    repo = f"{name}={repo}" if name else repo  # a library's: NAME=PATH, as --client-repo
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        added = track.enqueue_all(engine, redact_urls(repo), request.branch, items,
                                  request.configs, request.architecture, request.max_attempts)
    return items, [sha for sha, _ in added]


def track_status(request: TrackStatusRequest, world: World) -> list[track.CorpusProgress]:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return track.corpus_progress(engine, request.sha)


def track_claim(request: TrackClaimRequest, world: World) -> track.Job | None:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return track.claim(engine, request.runner, request.lease, request.architecture,
                           definitions_only=False)  # definition jobs are `track run`'s


def track_mark(request: TrackMarkRequest, world: World) -> track.Job:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return track.mark(engine, request.job_id, request.outcome, request.error,
                          request.attempt)


def track_renew(request: TrackRenewRequest, world: World) -> track.Job:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return track.renew(engine, request.job_id, request.lease, request.attempt)


def track_query(request: TrackQueryRequest, world: World
                ) -> tuple[list[track.Job], dict[str, int]]:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return (track.query(engine, request.states, request.sha, request.limit),
                track.counts(engine))


def track_cleanup(request: TrackCleanupRequest, world: World) -> track.Cleanup:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return track.cleanup(engine, request.requeue_expired,
                             request.delete_completed_older_than)


def db_push(request: DbPushRequest, world: World,
            pushed: Callable[[Path, PushResult], None]) -> None:
    """Each file in its own transaction, ``pushed`` told as it is stored."""
    url = request.store.url
    assert url is not None
    with world.database(url) as engine:
        for path in request.files:
            with database_errors(url, f"pushing {path} to {request.store.name} failed",
                                 " (nothing of this file was stored; push it again)"):
                result = push_file(engine, path)
            pushed(path, result)


def db_migrate(store: StoreRequest) -> list[int]:
    """The schema brought to the current version; the versions applied."""
    assert store.url is not None
    engine = make_engine(store.url)
    try:
        with database_errors(store.url, f"cannot use database {store.name}"):
            return migrate(engine)
    finally:
        engine.dispose()


@dataclass
class ComparedFiles:
    """compare-results: the judged rows, the series only one file has, what was written."""

    results: list[MetricComparison]
    unmatched: list[GroupKey]
    markdown: str
    environment: EnvDiff
    stops: list[SeriesStop] = field(default_factory=list)  # the rows' --runs auto stops


def _read(path: Path) -> list[Row]:
    try:
        return read_rows(path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def compare_files(request: CompareResultsRequest) -> ComparedFiles:
    """The two files read (exit 2 if either is no metrics.json) and judged unpaired; exit 2
    when they share no series with ok rows."""
    base_rows, new_rows = _read(request.baseline), _read(request.new)
    results, unmatched = compare(base_rows, new_rows, request.metrics, request.rule)
    if not results:
        profiled = any(row.get("profile") for row in base_rows + new_rows)
        hint = (" (rows measured under --profile are never compared: perf perturbs their "
                "timing)" if profiled else "")
        raise UsageError(f"{request.baseline} and {request.new} share no series with ok rows "
                         f"to compare{hint}")
    names = (str(request.baseline), str(request.new))
    diff = rows_env_diff({"baseline": base_rows, "new": new_rows})
    stops = recorded_stops(new_rows + base_rows)
    return ComparedFiles(results, unmatched, markdown(results, unmatched, *names)
                         + stops_markdown(stops) + environment_markdown(diff), diff, stops)
