"""The database schema (SQLAlchemy Core, one MetaData): the same tables on SQLite and PostgreSQL.

Tables:
  schema_version — one row per applied migration (store/migrations.py).
  runs           — what is common to the trials of one run or one pushed file (label, commit,
                   tool, versions, host, env). ``run_key`` makes a run unique.
  trials         — one metrics.json row each. ``row_hash`` (sha256 of the row's canonical JSON)
                   is UNIQUE: a live write and a later ``kvperf db push`` of the same file land
                   on the same trial, so pushing twice adds nothing. ``series_key`` is the hash
                   of the KEY_FIELDS values (results/row.py ``series_key``); ``revision`` is the
                   commit sha, or the run label when the run named no commit (what history
                   groups by). ``row`` keeps the full metrics.json row for provenance.
                   ``disturbed`` (migration 3): other processes took the trial's CPUs
                   (results/interference.py); history, summaries and change points leave
                   such trials out unless asked (``--include-disturbed``).
  metrics        — narrow: one numeric metric of one trial per row (rps, latencies,
                   server.cpu_us_per_request, server.usec_per_call, …).
  metric_summary — per (series_key, revision, metric name) over the ok trials that were not
                   disturbed: n, sum, sum of squares, min and max, maintained in the same
                   transaction as each trial write (store/writer.py), so history cells and
                   change-point series read one row per cell instead of aggregating every
                   stored value (migration 2).
  histograms     — the trial's HDR histograms (base64 V2), one per kind (corrected, service).
  commits        — commit metadata (filled by commit tracking).
  track_jobs     — commit tracking queue (store/track.py): one job per
                   (sha, config content hash, architecture).
  change_points  — the last ``kvperf regressions --store`` result (replaced as a whole each
                   time): one row per change point, for dashboards (store/changepoints.py).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION, JSONB
from sqlalchemy.schema import SchemaItem

metadata = MetaData()

# SQLite only aliases rowid (autoincrement) for INTEGER PRIMARY KEY, not BIGINT.
Id = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(JSONB(), "postgresql")
Double = Float().with_variant(DOUBLE_PRECISION(), "postgresql")
Timestamp = DateTime(timezone=True)

schema_version = Table(
    "schema_version", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Timestamp, nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("run_key", Text, nullable=False, unique=True),
    Column("label", Text),
    Column("commit_sha", Text),
    Column("source", Text, nullable=False),  # "live" or the pushed file's path
    Column("tool", Text),
    Column("tool_version", Text),
    Column("server_version", Text),
    Column("host", Text),
    Column("started_at", Timestamp),
    Column("env", Json),
)


def trials_table(meta: MetaData, version: int) -> Table:
    """The trials table as schema ``version`` has it (store/migrations.py creates version
    1's, then adds what later versions add): 3 adds ``disturbed``."""
    columns: list[SchemaItem] = [
        Column("id", Id, primary_key=True, autoincrement=True),
        Column("run_id", Id, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("row_hash", Text, nullable=False, unique=True),
        Column("series_key", Text, nullable=False),
        Column("revision", Text, nullable=False),
        Column("command", Text),
        Column("data_size", Integer),
        Column("pipeline", Integer),
        Column("clients", Integer),
        Column("requests", BigInteger),
        Column("duration", Double),
        Column("keyspacelen", BigInteger),
        Column("cluster_mode", Boolean),
        Column("tls", Boolean),
        Column("io_threads", Integer),
        Column("warmup", Double),
        Column("benchmark_threads", Integer),
        Column("config_set", Text),  # canonical JSON (sorted keys) or NULL: comparable as text
        Column("run_index", Integer),
        Column("trial_id", Text),
        Column("commit_sha", Text),
        Column("timestamp", Timestamp),
        Column("status", Text, nullable=False),
        Column("error", Text),
        Column("row", Json),
        Index("ix_trials_series_commit", "series_key", "commit_sha"),
        Index("ix_trials_series_revision", "series_key", "revision"),
        Index("ix_trials_commit", "commit_sha"),
        Index("ix_trials_revision", "revision"),
        Index("ix_trials_timestamp", "timestamp"),
    ]
    if version >= 3:  # the trial's interference verdict (results/interference.py)
        columns.append(Column("disturbed", Boolean, nullable=False, server_default=false()))
    return Table("trials", meta, *columns)


trials = trials_table(metadata, 3)

metrics = Table(
    "metrics", metadata,
    Column("trial_id", Id, ForeignKey("trials.id", ondelete="CASCADE"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("value", Double, nullable=False),
    Index("ix_metrics_name", "name"),
)

metric_summary = Table(
    "metric_summary", metadata,
    Column("series_key", Text, primary_key=True),
    Column("revision", Text, primary_key=True),
    Column("name", Text, primary_key=True),
    Column("n", BigInteger, nullable=False),
    Column("total", Double, nullable=False),
    Column("sumsq", Double, nullable=False),
    Column("min", Double, nullable=False),
    Column("max", Double, nullable=False),
    Index("ix_metric_summary_name_revision", "name", "revision"),
)

histograms = Table(
    "histograms", metadata,
    Column("trial_id", Id, ForeignKey("trials.id", ondelete="CASCADE"), primary_key=True),
    Column("kind", Text, primary_key=True),
    Column("unit", Text, nullable=False),
    Column("encoded", Text, nullable=False),
)

commits = Table(
    "commits", metadata,
    Column("sha", Text, primary_key=True),
    Column("repo", Text),
    Column("branch", Text),
    Column("committed_at", Timestamp),
    Column("author", Text),
    Column("subject", Text),
)

track_jobs = Table(
    "track_jobs", metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("repo", Text, nullable=False),
    Column("sha", Text, nullable=False),
    Column("config_hash", Text, nullable=False),
    Column("config_name", Text),
    Column("config_content", Text),
    Column("architecture", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("max_attempts", Integer, nullable=False, default=3),
    Column("claimed_by", Text),
    Column("lease_expires_at", Timestamp),
    Column("created_at", Timestamp),
    Column("updated_at", Timestamp),
    Column("last_error", Text),
    UniqueConstraint("sha", "config_hash", "architecture", name="uq_track_jobs_identity"),
    Index("ix_track_jobs_state", "state"),
)

change_points = Table(
    "change_points", metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("series_key", Text, nullable=False),
    Column("metric", Text, nullable=False),
    Column("command", Text),
    Column("params", Json),
    Column("direction", Text, nullable=False),  # "regression" | "improvement"
    Column("magnitude", Double),  # after_mean / before_mean - 1
    Column("pvalue", Double),
    Column("before_mean", Double),
    Column("after_mean", Double),
    Column("last_before_sha", Text, nullable=False),
    Column("first_after_sha", Text, nullable=False),
    Column("first_after_at", Timestamp),
    Column("detected_at", Timestamp, nullable=False),
    UniqueConstraint("series_key", "metric", "first_after_sha", name="uq_change_points"),
)

alert_summaries = Table(
    "alert_summaries", metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("last_before_sha", Text, nullable=False),
    Column("first_after_sha", Text, nullable=False),
    Column("first_after_at", Timestamp),
    Column("state", Text, nullable=False),  # store/alerts.py STATES
    Column("owner", Text),
    Column("culprit_sha", Text),
    Column("parent_sha", Text),
    Column("bisect_log", Text),  # the bisection's log that named the culprit
    Column("notes", Json),  # [{"at", "state", "by", "text"}], oldest first
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    Column("acknowledged_at", Timestamp),
    Column("culprit_at", Timestamp),
    Column("resolved_at", Timestamp),
    UniqueConstraint("last_before_sha", "first_after_sha", name="uq_alert_summaries_range"),
    Index("ix_alert_summaries_state", "state"),
)

alerts = Table(
    "alerts", metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("summary_id", Id, ForeignKey("alert_summaries.id", ondelete="CASCADE"),
           nullable=False),
    Column("series_key", Text, nullable=False),
    Column("metric", Text, nullable=False),
    Column("command", Text),
    Column("params", Json),
    Column("direction", Text, nullable=False),
    Column("magnitude", Double),
    Column("pvalue", Double),
    Column("before_mean", Double),
    Column("after_mean", Double),
    Column("created_at", Timestamp, nullable=False),
    UniqueConstraint("summary_id", "series_key", "metric", name="uq_alerts_series"),
)
