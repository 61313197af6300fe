"""A commit's definition corpus as stored: every definitions row (a test's trial) the
commit's runs wrote, and the notes of its definition-shard jobs (refusals, why a job
failed), for ``report --definitions``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Engine, select

from kvperf.core.errors import UsageError
from kvperf.results.row import Row, upgrade
from kvperf.store.history import resolve_revision
from kvperf.store.schema import track_jobs, trials
from kvperf.store.track import DEFINITIONS_PREFIX


def definition_rows(engine: Engine, revision: str) -> list[Row]:
    """The rows of benchmark-definition tests stored for ``revision`` (a full one: see
    ``resolve``), in the order they were stored."""
    query = (select(trials.c.row).where(trials.c.revision == revision)
             .order_by(trials.c.id))
    with engine.connect() as conn:
        stored = [r for (r,) in conn.execute(query) if isinstance(r, dict)]
    rows = [upgrade(cast(Row, r), f"a trial of {revision}") for r in stored]
    return [r for r in rows if r.get("definition")]


def resolve(engine: Engine, prefix: str, flag: str) -> str:
    """The stored revision (a commit's sha) ``prefix`` names (UsageError naming ``flag``:
    none or several)."""
    try:
        return resolve_revision(engine, prefix)
    except UsageError as exc:
        raise UsageError(str(exc).replace("--sha", flag, 1)) from None


@dataclass(frozen=True)
class JobNote:
    """A definition-shard job of the commit with a note: its state and the note (the
    tests it refused, or why it failed)."""

    job_id: int
    state: str
    note: str


def job_notes(engine: Engine, sha: str) -> list[JobNote]:
    t = track_jobs.c
    query = (select(t.id, t.state, t.last_error)
             .where(t.sha == sha, t.config_name.startswith(DEFINITIONS_PREFIX),
                    t.last_error.is_not(None))
             .order_by(t.id))
    with engine.connect() as conn:
        return [JobNote(i, s, n) for i, s, n in conn.execute(query)]
