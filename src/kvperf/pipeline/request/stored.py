"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kvperf.analysis.changepoint import MIN_SEGMENT
from kvperf.analysis.regressions import DEFAULT_METRICS, Thresholds
from kvperf.analysis.verdict import Rule
from kvperf.config.scenarios import is_module_config
from kvperf.core.errors import ConfigError, UsageError
from kvperf.pipeline.bisect import BisectRequest
from kvperf.pipeline.read.history_report import HistoryPageRequest
from kvperf.pipeline.read.report import ReportRequest
from kvperf.pipeline.request.bisect import change_point_base
from kvperf.pipeline.request.common import (
    BuildFlags,
    StoreFlags,
    StoreRequest,
    store_request,
    water_line_rule,
)
from kvperf.results.row import SeriesParams
from kvperf.store import track
from kvperf.store.history import COMMON_METRICS, check_metric, parse_where


@dataclass(frozen=True)
class HistoryRequest:
    """`kvperf history`: the last revisions per series, or two revisions' % change."""

    metrics: tuple[str, ...]
    where: SeriesParams
    store: StoreRequest
    last: int = 10
    shas: tuple[str, str] | None = None
    json: bool = False
    include_disturbed: bool = False  # --include-disturbed: cells from every ok trial


def history_request(*, last: int, shas: tuple[str, str] | None, metrics: tuple[str, ...],
                    where: tuple[str, ...], json: bool, store: StoreFlags,
                    include_disturbed: bool = False) -> HistoryRequest:
    if last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    names = (tuple(check_metric(m) for m in metrics) if metrics
             else tuple(COMMON_METRICS) if shas else ("rps",))
    return HistoryRequest(names, parse_where(where), store_request(store), last, shas, json,
                          include_disturbed)


def parse_since(text: str | None) -> datetime | None:
    """ISO date or date-time → aware datetime (UTC when no zone is given)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: expected an ISO date such as 2025-06-01 or "
                         "2025-06-01T12:00") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def thresholds(max_pvalue: float, min_magnitude: float | None, window: int | None
               ) -> Thresholds:
    if not 0.0 < max_pvalue < 1.0:
        raise UsageError(f"--max-pvalue must be in (0, 1), got {max_pvalue}")
    if min_magnitude is not None and min_magnitude < 0:
        raise UsageError(f"--min-magnitude must be >= 0, got {min_magnitude}")
    if window is not None and window < 2 * MIN_SEGMENT:
        raise UsageError(f"--window must be at least {2 * MIN_SEGMENT}, got {window}")
    return Thresholds(max_pvalue, min_magnitude, window)


@dataclass(frozen=True)
class RegressionsRequest:
    """`kvperf regressions`: change points of the stored histories, optionally stored
    (``write``) and bisected (``bisect``: what each bisection shares)."""

    metrics: tuple[str, ...]
    where: SeriesParams
    limits: Thresholds
    store: StoreRequest
    since: datetime | None = None
    regressions_only: bool = False
    json: bool = False
    write: bool = False  # --store: replace the change_points table
    fail_on_regression: bool = False
    bisect: BisectRequest | None = None
    include_disturbed: bool = False  # --include-disturbed: histories from every ok trial


@dataclass(frozen=True)
class ChangePointFlags:
    """`kvperf regressions --bisect` and the flags its bisections take, as given."""

    bisect: bool = False
    config: Path | None = None
    runs: int | None = None
    max_runs: int | None = None
    build: BuildFlags = field(default_factory=BuildFlags)


def regressions_request(*, since: str | None, metrics: tuple[str, ...],
                        where: tuple[str, ...], max_pvalue: float,
                        min_magnitude: float | None, window: int | None,
                        regressions_only: bool, json: bool, write: bool,
                        fail_on_regression: bool, store: StoreFlags,
                        bisect: ChangePointFlags,
                        include_disturbed: bool = False) -> RegressionsRequest:
    if bisect.bisect and json:
        raise UsageError("--bisect does not apply with --json (its steps and answers are "
                         "printed as text)")
    base = (change_point_base(config=bisect.config, runs=bisect.runs,
                              max_runs=bisect.max_runs, build=bisect.build, store=store)
            if bisect.bisect else None)
    when, limits = parse_since(since), thresholds(max_pvalue, min_magnitude, window)
    names = tuple(check_metric(m) for m in metrics or DEFAULT_METRICS)
    return RegressionsRequest(names, parse_where(where), limits, store_request(store), when,
                              regressions_only, json, write, fail_on_regression, base,
                              include_disturbed)


def report_request(*, paths: tuple[Path, ...], history: bool, metrics: tuple[str, ...],
                   where: tuple[str, ...], output: Path | None, json: Path | None,
                   markdown: Path | None, store: StoreFlags, include_disturbed: bool = False
                   ) -> ReportRequest | HistoryPageRequest:
    """`kvperf report PATH…` (a run or an A/B), or `--history` (the database)."""
    if history:
        if paths or markdown:
            raise UsageError("--history reads the database: give no PATH and no --markdown")
        return HistoryPageRequest(tuple(check_metric(m) for m in metrics or DEFAULT_METRICS),
                                  parse_where(where), store_request(store),
                                  output or Path.cwd() / "history.html", json,
                                  include_disturbed)
    if not paths:
        raise UsageError("give a PATH (a label directory, metrics.json or comparison "
                         "directory), or --history")
    if metrics or where or include_disturbed:
        raise UsageError("--metric, --where and --include-disturbed apply only with --history")
    return ReportRequest(list(paths), output or Path.cwd() / "report.html", json, markdown)


@dataclass(frozen=True)
class CompareResultsRequest:
    """`kvperf compare-results BASELINE NEW`: two metrics.json files judged unpaired."""

    baseline: Path
    new: Path
    rule: Rule
    metrics: str = "all"
    output: Path | None = None
    graphs: Path | None = None
    fail_on_regression: bool = False


def compare_results_request(*, baseline: Path, new: Path, metrics: str, output: Path | None,
                            graphs: Path | None, fail_on_regression: bool, water_line: float
                            ) -> CompareResultsRequest:
    return CompareResultsRequest(baseline, new, water_line_rule(water_line), metrics, output,
                                 graphs, fail_on_regression)


@dataclass(frozen=True)
class TrackDetermineRequest:
    """`kvperf track determine`: the branch's last commits, enqueued per config — of the
    server repository (``--repo``) or of a module's (``--module-repo``: its commits built
    and run on the runner's fixed server, the config a module-test config)."""

    repo: str
    branch: str
    max_commits: int
    config: track.Config
    architecture: str
    max_attempts: int
    store: StoreRequest
    module: bool = False


def job_kind(config_content: str | None) -> str:
    """``module`` for a job whose config is a module-test config (test_groups: its commits
    are a module's, run with ``run --commits SHA --module-repo REPO``), else ``server``."""
    try:
        return "module" if is_module_config(json.loads(config_content or "")) else "server"
    except ValueError:
        return "server"


def track_determine_request(*, repo: str | None, branch: str, max_commits: int,
                            config: Path, architecture: str, max_attempts: int,
                            store: StoreFlags, module_repo: str | None = None
                            ) -> TrackDetermineRequest:
    if (repo is None) == (module_repo is None):
        raise UsageError("give --repo R (server commits) or --module-repo R (a module's "
                         "commits, run on a fixed server), one of them")
    try:
        content = config.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(config)!r}: {exc.strerror or exc}"
                          ) from None
    tracked = track.config_from_text(config.name, content)
    module = module_repo is not None
    if (job_kind(content) == "module") != module:
        raise UsageError(f"config {str(config)!r}: " + (
            "--module-repo tracks a module-test config (test_groups); this one is a server "
            "benchmark config" if module else
            "a module-test config (test_groups) is tracked with --module-repo R"))
    return TrackDetermineRequest(module_repo or repo or "", branch, max_commits, tracked,
                                 architecture, max_attempts, store_request(store), module)


@dataclass(frozen=True)
class TrackClaimRequest:
    runner: str
    lease: float
    architecture: str | None
    hold: float
    store: StoreRequest


def track_claim_request(*, runner: str, lease: float, architecture: str | None, hold: float,
                        store: StoreFlags) -> TrackClaimRequest:
    if hold < 0:
        raise UsageError(f"--hold must be >= 0, got {hold}")
    return TrackClaimRequest(runner, lease, architecture, hold, store_request(store))


@dataclass(frozen=True)
class TrackMarkRequest:
    job_id: int
    outcome: track.Outcome
    error: str | None
    attempt: int | None
    store: StoreRequest


@dataclass(frozen=True)
class TrackRenewRequest:
    job_id: int
    lease: float
    attempt: int | None
    store: StoreRequest


@dataclass(frozen=True)
class TrackQueryRequest:
    states: tuple[str, ...]
    sha: str | None
    limit: int
    json: bool
    store: StoreRequest


@dataclass(frozen=True)
class TrackCleanupRequest:
    requeue_expired: bool
    delete_completed_older_than: float | None
    store: StoreRequest


@dataclass(frozen=True)
class DbPushRequest:
    """`kvperf db push FILE…`: metrics.json files into the database."""

    files: tuple[Path, ...]
    store: StoreRequest


def db_push_request(files: tuple[Path, ...], store: StoreFlags) -> DbPushRequest:
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    return DbPushRequest(files, store_request(store))


@dataclass(frozen=True)
class DoctorRequest:
    """`kvperf doctor`: the machine's facts as a table or JSON, noise sampled this long."""

    json: bool = False
    sample: float = 0.5


def doctor_request(*, json: bool, sample: float) -> DoctorRequest:
    if not 0.0 <= sample <= 60.0:
        raise UsageError(f"--sample must be between 0 and 60 seconds, got {sample}")
    return DoctorRequest(json, sample)


@dataclass(frozen=True)
class SuitesRequest:
    """`kvperf suites`: the built-in suites, with their files when asked."""

    paths: bool = False
