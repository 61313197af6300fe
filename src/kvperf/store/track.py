"""Commit tracking for runner fleets: a queue of (commit, config content, architecture) jobs.

States and transitions (``attempts`` counts claims; ``max_attempts`` caps them, default 3)::

    queued ──claim──▶ in_progress ──mark complete──▶ complete
                         │  ▲   └──mark failed──▶ failed ──claim (attempts < max)──▶ in_progress
                         │  └──claim (lease expired, attempts < max)
                         └──cleanup (lease expired)──▶ queued (attempts < max) | failed (cap hit)

A job is *claimable* when it is queued, failed, or in_progress with an expired lease — and
has attempts < max_attempts. A failed job whose attempts reached the cap stays failed.

``claim`` is one statement: ``UPDATE … WHERE id = (SELECT id … LIMIT 1 FOR UPDATE SKIP
LOCKED) RETURNING …``. On PostgreSQL concurrent claimers skip each other's locked rows, so
no two runners get the same job; on SQLite the statement runs under the database's single
writer lock. Time comes from the database on PostgreSQL (``now()``: one clock for the whole
fleet) and from this host on SQLite (stored as naive UTC). ``attempts`` after a claim is the
fencing token: ``mark``/``renew`` with ``attempt`` only act while the job still has it, so a
runner whose lease expired and was taken over cannot overwrite the new claimant's result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Connection, Engine, Integer, and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from kvperf.core.errors import ConfigError, StoreError, UsageError
from kvperf.core.jsontypes import JsonObject
from kvperf.store.schema import commits, track_jobs

QUEUED, IN_PROGRESS, COMPLETE, FAILED = "queued", "in_progress", "complete", "failed"
STATES = (QUEUED, IN_PROGRESS, COMPLETE, FAILED)
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_LEASE_SECONDS = 3600
Outcome = Literal["complete", "failed"]
DEFINITIONS_PREFIX = "definitions:"  # config_name of a definition-shard job
DEFINITIONS_FORMAT = "kvperf-definitions-job"  # its config_content's "format" (version 1)


@dataclass(frozen=True)
class TrackedCommit:
    """A commit of the tracked branch (what ``determine`` records in ``commits``)."""

    sha: str
    committed_at: datetime
    author: str
    subject: str


@dataclass(frozen=True)
class Config:
    """A benchmark config tracked by content: ``hash`` is sha256 of its canonical JSON."""

    name: str
    content: str
    hash: str


@dataclass(frozen=True)
class Job:
    """One track_jobs row, as printed by ``claim`` and ``query``."""

    id: int
    repo: str
    sha: str
    config_hash: str
    config_name: str | None
    architecture: str
    state: str
    attempts: int
    max_attempts: int
    claimed_by: str | None
    lease_expires_at: datetime | None
    updated_at: datetime | None
    last_error: str | None
    config_content: str | None = None

    def as_json(self, with_content: bool = True) -> JsonObject:
        """JSON-ready dict; ``attempt`` (= attempts) is the token for mark/renew."""
        data = asdict(self)
        data["attempt"] = self.attempts
        for key in ("lease_expires_at", "updated_at"):
            data[key] = data[key].isoformat() if data[key] else None
        if not with_content:
            del data["config_content"]
        return data


def config_from_text(name: str, content: str) -> Config:
    """The config's identity: sha256 of its canonical JSON (key order and whitespace do not
    make another config; any other change does). Not JSON → ``ConfigError``."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config {name!r} is not valid JSON ({exc.msg} at line "
                          f"{exc.lineno})") from None
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return Config(name, content, hashlib.sha256(canonical.encode()).hexdigest())


def is_claimable(state: str, attempts: int, max_attempts: int, lease_expires_at: datetime | None,
                 now: datetime) -> bool:
    """The claim rule as a pure function (the SQL in ``_claimable`` is the same rule)."""
    if attempts >= max_attempts:
        return False
    if state == IN_PROGRESS:
        return lease_expires_at is not None and lease_expires_at < now
    return state in (QUEUED, FAILED)


def db_now(conn: Connection) -> datetime:
    """The fleet's clock: PostgreSQL's ``now()``; on SQLite this host's UTC time (naive,
    as SQLite stores it)."""
    if conn.dialect.name == "postgresql":
        value = conn.execute(select(func.now())).scalar_one()
        assert isinstance(value, datetime)
        return value
    return datetime.now(UTC).replace(tzinfo=None)


def _aware(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _job(row: Any) -> Job:
    m = row._mapping
    return Job(id=m["id"], repo=m["repo"], sha=m["sha"], config_hash=m["config_hash"],
               config_name=m["config_name"], architecture=m["architecture"], state=m["state"],
               attempts=m["attempts"], max_attempts=m["max_attempts"],
               claimed_by=m["claimed_by"], lease_expires_at=_aware(m["lease_expires_at"]),
               updated_at=_aware(m["updated_at"]), last_error=m["last_error"],
               config_content=m.get("config_content"))


def _insert(conn: Connection) -> Any:
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


def record_commits(conn: Connection, repo: str, branch: str,
                   items: Sequence[TrackedCommit]) -> None:
    """Upsert commit metadata (sha, time, author, subject) into ``commits``."""
    if not items:
        return
    rows = [{"sha": c.sha, "repo": repo, "branch": branch, "committed_at": c.committed_at,
             "author": c.author, "subject": c.subject} for c in items]
    stmt = _insert(conn)(commits).values(rows)
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["sha"],
        set_={k: stmt.excluded[k] for k in ("repo", "branch", "committed_at", "author",
                                             "subject")}))


def enqueue(engine: Engine, repo: str, branch: str, items: Sequence[TrackedCommit],
            config: Config, architecture: str,
            max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> list[str]:
    """Record the commits and add a queued job per commit not yet tracked for this config
    content and architecture. Returns the shas newly enqueued (existing jobs are untouched,
    whatever their state)."""
    return [sha for sha, _ in enqueue_all(engine, repo, branch, items, [config],
                                          architecture, max_attempts)]


def enqueue_all(engine: Engine, repo: str, branch: str, items: Sequence[TrackedCommit],
                configs: Sequence[Config], architecture: str,
                max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> list[tuple[str, str]]:
    """``enqueue`` for every (commit, config) pair (a corpus' shards), in one transaction.
    Returns the (sha, config hash) pairs newly enqueued."""
    if max_attempts < 1:
        raise UsageError(f"--max-attempts must be at least 1, got {max_attempts}")
    with engine.begin() as conn:
        record_commits(conn, repo, branch, items)
        now = db_now(conn)
        rows = [{"repo": repo, "sha": c.sha, "config_hash": config.hash,
                 "config_name": config.name, "config_content": config.content,
                 "architecture": architecture, "state": QUEUED, "attempts": 0,
                 "max_attempts": max_attempts, "created_at": now, "updated_at": now}
                for c in items for config in configs]
        added: list[tuple[str, str]] = []
        for start in range(0, len(rows), 1000):  # bound the statement's parameters
            stmt = _insert(conn)(track_jobs).values(rows[start:start + 1000])
            stmt = stmt.on_conflict_do_nothing(
                index_elements=["sha", "config_hash", "architecture"])
            added += [(r.sha, r.config_hash) for r in conn.execute(
                stmt.returning(track_jobs.c.sha, track_jobs.c.config_hash))]
    return added


def _claimable(now: datetime) -> Any:
    t = track_jobs.c
    expired = and_(t.state == IN_PROGRESS, t.lease_expires_at < now)
    return and_(t.attempts < t.max_attempts, or_(t.state.in_((QUEUED, FAILED)), expired))


def claim(engine: Engine, runner: str, lease_seconds: float = DEFAULT_LEASE_SECONDS,
          architecture: str | None = None, definitions_only: bool | None = None
          ) -> Job | None:
    """Atomically take one claimable job (fresh ones first, then retries, oldest first):
    state in_progress, attempts + 1, lease until now + lease_seconds. None when none is left.
    ``definitions_only``: True, only definition-shard jobs (``track run``'s); False, none of
    them (``track claim``'s: its runners run configs); None, any job."""
    if lease_seconds <= 0:
        raise UsageError(f"--lease must be positive, got {lease_seconds}")
    if not runner:
        raise UsageError("--runner must name this runner")
    t = track_jobs.c
    with engine.begin() as conn:
        now = db_now(conn)
        cond = _claimable(now)
        if architecture:
            cond = and_(cond, t.architecture == architecture)
        if definitions_only is not None:
            shard = t.config_name.startswith(DEFINITIONS_PREFIX)
            cond = and_(cond, shard if definitions_only else
                        or_(t.config_name.is_(None), ~shard))
        pick = (select(t.id).where(cond).order_by(t.attempts, t.id).limit(1)
                .with_for_update(skip_locked=True).scalar_subquery())
        stmt = (update(track_jobs).where(t.id == pick)
                .values(state=IN_PROGRESS, attempts=t.attempts + 1, claimed_by=runner,
                        lease_expires_at=now + timedelta(seconds=lease_seconds),
                        updated_at=now)
                .returning(*track_jobs.c))
        row = conn.execute(stmt).first()
    return _job(row) if row is not None else None


def _guarded(job_id: int, attempt: int | None) -> Any:
    t = track_jobs.c
    cond = and_(t.id == job_id, t.state == IN_PROGRESS)
    return and_(cond, t.attempts == attempt) if attempt is not None else cond


def _not_marked(conn: Connection, job_id: int, attempt: int | None) -> StoreError:
    row = conn.execute(select(track_jobs).where(track_jobs.c.id == job_id)).first()
    if row is None:
        return StoreError(f"no track job with id {job_id}")
    job = _job(row)
    return StoreError(f"track job {job_id} is {job.state} at attempt {job.attempts}, not "
                      f"in_progress{'' if attempt is None else f' at attempt {attempt}'}: "
                      f"its lease may have expired and another runner taken it over")


def mark(engine: Engine, job_id: int, outcome: Outcome, error: str | None = None,
         attempt: int | None = None) -> Job:
    """Finish an in_progress job as complete or failed (with ``error``: why it failed, or a
    complete job's note, e.g. the definitions it refused). With ``attempt``, only while the
    job is still at that claim (fencing)."""
    if outcome not in (COMPLETE, FAILED):
        raise UsageError(f"a job is marked complete or failed, not {outcome!r}")
    with engine.begin() as conn:
        now = db_now(conn)
        stmt = (update(track_jobs).where(_guarded(job_id, attempt))
                .values(state=outcome, lease_expires_at=None, updated_at=now,
                        last_error=error)
                .returning(*track_jobs.c))
        row = conn.execute(stmt).first()
        if row is None:
            raise _not_marked(conn, job_id, attempt)
    return _job(row)


def renew(engine: Engine, job_id: int, lease_seconds: float = DEFAULT_LEASE_SECONDS,
          attempt: int | None = None) -> Job:
    """Heartbeat: push an in_progress job's lease to now + lease_seconds."""
    with engine.begin() as conn:
        now = db_now(conn)
        stmt = (update(track_jobs).where(_guarded(job_id, attempt))
                .values(lease_expires_at=now + timedelta(seconds=lease_seconds), updated_at=now)
                .returning(*track_jobs.c))
        row = conn.execute(stmt).first()
        if row is None:
            raise _not_marked(conn, job_id, attempt)
    return _job(row)


def query(engine: Engine, states: Iterable[str] = (), sha: str | None = None,
          limit: int | None = None) -> list[Job]:
    """Jobs, newest first, optionally filtered by state and sha prefix."""
    states = list(states)
    bad = [s for s in states if s not in STATES]
    if bad:
        raise UsageError(f"unknown state {bad[0]!r}; states are {', '.join(STATES)}")
    t = track_jobs.c
    stmt = select(track_jobs).order_by(t.id.desc())
    if states:
        stmt = stmt.where(t.state.in_(states))
    if sha:
        stmt = stmt.where(t.sha.startswith(sha, autoescape=True))
    if limit:
        stmt = stmt.limit(limit)
    with engine.connect() as conn:
        return [_job(r) for r in conn.execute(stmt)]


def counts(engine: Engine) -> dict[str, int]:
    """Number of jobs per state (every state present, 0 when none)."""
    t = track_jobs.c
    with engine.connect() as conn:
        stmt = select(t.state, func.count()).group_by(t.state)
        found = {str(state): int(n) for state, n in conn.execute(stmt)}
    return {s: int(found.get(s, 0)) for s in STATES}


@dataclass(frozen=True)
class Cleanup:
    """What ``cleanup`` did: expired claims requeued / failed at the cap, completed deleted."""

    requeued: int
    failed: int
    deleted: int


def cleanup(engine: Engine, requeue_expired: bool = True,
            delete_completed_days: float | None = None) -> Cleanup:
    """Requeue in_progress jobs whose lease expired (or fail them when they used their last
    attempt), and delete *job rows* completed more than N days ago (results are kept; a
    deleted job's commit would be enqueued again by a later ``determine`` if still listed)."""
    t = track_jobs.c
    requeued = failed = deleted = 0
    with engine.begin() as conn:
        now = db_now(conn)
        expired = and_(t.state == IN_PROGRESS, t.lease_expires_at < now)
        if requeue_expired:
            failed = conn.execute(
                update(track_jobs).where(and_(expired, t.attempts >= t.max_attempts))
                .values(state=FAILED, last_error="lease expired on the last attempt",
                        lease_expires_at=None, updated_at=now)).rowcount
            requeued = conn.execute(
                update(track_jobs).where(expired)
                .values(state=QUEUED, lease_expires_at=None, claimed_by=None,
                        updated_at=now)).rowcount
        if delete_completed_days is not None:
            cutoff = now - timedelta(days=delete_completed_days)
            deleted = conn.execute(delete(track_jobs).where(
                and_(t.state == COMPLETE, t.updated_at < cutoff))).rowcount
    return Cleanup(requeued, failed, deleted)



@dataclass(frozen=True)
class DefinitionsJob:
    """A definition-shard job's payload (its config_content, format
    ``kvperf-definitions-job`` version 1): definition files relative to the corpus root the
    runner is given, the shard's preload key, and the selection every runner applies."""

    shard: str
    files: tuple[str, ...]
    tests_regexp: str = ".*"
    override_test_time: int | None = None
    topologies: tuple[str, ...] | None = None
    cap_request_bound: bool = False

    def config(self) -> Config:
        """The job's identity in the queue: one per (commit, shard content, architecture)."""
        data = {"format": DEFINITIONS_FORMAT, "version": 1, "shard": self.shard,
                "files": list(self.files), "tests_regexp": self.tests_regexp,
                "override_test_time": self.override_test_time,
                "topologies": None if self.topologies is None else list(self.topologies)}
        if self.cap_request_bound:  # absent otherwise: earlier jobs keep their identity
            data["cap_request_bound"] = True
        content = json.dumps(data, sort_keys=True)
        return config_from_text(f"{DEFINITIONS_PREFIX}{self.shard[:16]}", content)


def definitions_job(content: str | None) -> DefinitionsJob | None:
    """The payload of a definition-shard job's config_content; None for any other job."""
    try:
        data = json.loads(content or "")
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != DEFINITIONS_FORMAT:
        return None
    if data.get("version") != 1:
        raise StoreError(f"definitions job format version {data.get('version')!r} is not "
                         "known to this kvperf (1 is): upgrade the runner")
    topologies = data.get("topologies")
    return DefinitionsJob(str(data["shard"]), tuple(data["files"]),
                          str(data.get("tests_regexp") or ".*"),
                          data.get("override_test_time"),
                          None if topologies is None else tuple(topologies),
                          data.get("cap_request_bound") is True)


@dataclass(frozen=True)
class CorpusProgress:
    """One commit's corpus: its definition-shard jobs counted per state; ``done`` when
    every job is complete or failed at its retry cap."""

    sha: str
    counts: dict[str, int]
    exhausted: int  # failed jobs with no attempt left

    @property
    def jobs(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> bool:
        return self.counts[COMPLETE] + self.exhausted == self.jobs


def corpus_progress(engine: Engine, sha: str | None = None) -> list[CorpusProgress]:
    """Per commit with definition-shard jobs (sha prefix ``sha``), the jobs per state."""
    t = track_jobs.c
    capped = func.sum(func.cast(and_(t.state == FAILED, t.attempts >= t.max_attempts),
                                Integer))
    stmt = (select(t.sha, t.state, func.count(), capped)
            .where(t.config_name.startswith(DEFINITIONS_PREFIX))
            .group_by(t.sha, t.state).order_by(t.sha))
    if sha:
        stmt = stmt.where(t.sha.startswith(sha, autoescape=True))
    found: dict[str, dict[str, int]] = {}
    exhausted: dict[str, int] = {}
    with engine.connect() as conn:
        for commit, state, n, cap in conn.execute(stmt):
            found.setdefault(commit, dict.fromkeys(STATES, 0))[state] = int(n)
            exhausted[commit] = exhausted.get(commit, 0) + int(cap or 0)
    return [CorpusProgress(c, counts, exhausted[c]) for c, counts in found.items()]


def definitions_in_progress(engine: Engine, architecture: str | None = None) -> int:
    """Definition-shard jobs other runners hold (in_progress): a runner that waits for them
    takes one over when its lease expires."""
    t = track_jobs.c
    cond = and_(t.config_name.startswith(DEFINITIONS_PREFIX), t.state == IN_PROGRESS)
    if architecture:
        cond = and_(cond, t.architecture == architecture)
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).where(cond)).scalar_one())
