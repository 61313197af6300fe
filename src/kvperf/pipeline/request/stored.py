"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kvperf.analysis.regressions import Thresholds
from kvperf.analysis.verdict import Rule
from kvperf.clients.manifest import Manifest
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.common import (
    BuildFlags,
    StoreRequest,
)
from kvperf.results.row import SeriesParams
from kvperf.store import track


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
    unstable: bool = False  # --unstable: list the unstable series instead
    include_unstable: bool = False  # --include-unstable: their change points listed too
    noise_runs: tuple[Path, ...] = ()  # --noise-run: `kvperf noise` results (A/, B/)


@dataclass(frozen=True)
class ChangePointFlags:
    """`kvperf regressions --bisect` and the flags its bisections take, as given."""

    bisect: bool = False
    config: Path | None = None
    runs: int | None = None
    max_runs: int | None = None
    build: BuildFlags = field(default_factory=BuildFlags)


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


@dataclass(frozen=True)
class TrackDetermineRequest:
    """`kvperf track determine`: the branch's last commits, enqueued per config — of the
    server repository (``--repo``) or of a module's (``--module-repo``: its commits built
    and run on the runner's fixed server, the config a module-test config)."""

    repo: str
    branch: str
    max_commits: int
    config: track.Config | None  # None: --definitions, the corpus' shards are the configs
    architecture: str
    max_attempts: int
    store: StoreRequest
    module: bool = False
    shards: tuple[track.Config, ...] = ()  # --definitions: one job per (commit, shard)

    @property
    def configs(self) -> tuple[track.Config, ...]:
        return self.shards if self.config is None else (self.config,)


@dataclass(frozen=True)
class CorpusReportRequest:
    """`kvperf report --definitions --commit X [--baseline Y]`: a commit's definition corpus
    from the database, judged against the baseline's; the HTML and markdown files asked."""

    commit: str
    baseline: str | None
    rule: Rule
    store: StoreRequest
    html: Path | None = None
    markdown: Path | None = None


@dataclass(frozen=True)
class TrackRunRequest:
    """`kvperf track run`: claim definition-shard jobs and run them until none is left
    (``max_jobs``: at most that many), the files resolved under ``corpus``; the server
    ``server_bin`` (fixed) or the job's commit built (``build``: how, the repo the job's)."""

    runner: str
    lease: float
    architecture: str | None
    corpus: Path
    server_bin: str | None
    build: BuildFlags
    results_dir: Path
    max_jobs: int | None
    ignore_resources: bool
    store: StoreRequest
    wait: bool = False  # while others hold jobs, wait to take over one whose lease expires


@dataclass(frozen=True)
class TrackStatusRequest:
    """`kvperf track status`: corpus progress per commit (sha prefix)."""

    sha: str | None
    store: StoreRequest


@dataclass(frozen=True)
class TrackClaimRequest:
    runner: str
    lease: float
    architecture: str | None
    hold: float
    store: StoreRequest


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


@dataclass(frozen=True)
class DoctorRequest:
    """`kvperf doctor`: the machine's facts as a table or JSON, noise sampled this long."""

    json: bool = False
    sample: float = 0.5


@dataclass(frozen=True)
class SuitesRequest:
    """`kvperf suites`: the built-in suites, with their files when asked."""

    paths: bool = False


@dataclass(frozen=True)
class ReportRequest:
    paths: list[Path]
    html: Path
    json: Path | None = None
    markdown: Path | None = None  # A/B only: the comparison as compare's markdown


@dataclass(frozen=True)
class HistoryPageRequest:
    """`kvperf report --history`: which histories, from which database, into which files."""

    metrics: tuple[str, ...]
    where: SeriesParams
    store: StoreRequest
    html: Path
    json: Path | None = None
    include_disturbed: bool = False  # --include-disturbed: histories from every ok trial

    @property
    def source(self) -> str:
        """The database, credentials redacted."""
        return self.store.name


@dataclass(frozen=True)
class InstallRequest:
    """`kvperf clients install`: the clients chosen, in order; ``available``: skip those
    whose runtime is missing here."""

    chosen: list[Manifest]
    available: bool = False
