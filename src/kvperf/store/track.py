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

from sqlalchemy import Connection, Engine, and_, delete, func, or_, select, update
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
    if max_attempts < 1:
        raise UsageError(f"--max-attempts must be at least 1, got {max_attempts}")
    with engine.begin() as conn:
        record_commits(conn, repo, branch, items)
        now = db_now(conn)
        rows = [{"repo": repo, "sha": c.sha, "config_hash": config.hash,
                 "config_name": config.name, "config_content": config.content,
                 "architecture": architecture, "state": QUEUED, "attempts": 0,
                 "max_attempts": max_attempts, "created_at": now, "updated_at": now}
                for c in items]
        if not rows:
            return []
        stmt = _insert(conn)(track_jobs).values(rows).on_conflict_do_nothing(
            index_elements=["sha", "config_hash", "architecture"])
        added = conn.execute(stmt.returning(track_jobs.c.sha)).scalars().all()
    return list(added)


def _claimable(now: datetime) -> Any:
    t = track_jobs.c
    expired = and_(t.state == IN_PROGRESS, t.lease_expires_at < now)
    return and_(t.attempts < t.max_attempts, or_(t.state.in_((QUEUED, FAILED)), expired))


def claim(engine: Engine, runner: str, lease_seconds: float = DEFAULT_LEASE_SECONDS,
          architecture: str | None = None) -> Job | None:
    """Atomically take one claimable job (fresh ones first, then retries, oldest first):
    state in_progress, attempts + 1, lease until now + lease_seconds. None when none is left."""
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
    """Finish an in_progress job as complete or failed (with ``error``). With ``attempt``,
    only while the job is still at that claim (fencing)."""
    if outcome not in (COMPLETE, FAILED):
        raise UsageError(f"a job is marked complete or failed, not {outcome!r}")
    with engine.begin() as conn:
        now = db_now(conn)
        stmt = (update(track_jobs).where(_guarded(job_id, attempt))
                .values(state=outcome, lease_expires_at=None, updated_at=now,
                        last_error=error if outcome == FAILED else None)
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

