"""`kvperf db push FILE…` and `kvperf db migrate`: metrics.json files into the results
database (each file in its own transaction, told as it is stored), and the schema brought
to the current version. ``db_push_request`` checks the files exist before the database is
opened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.read import stored
from kvperf.pipeline.request.common import StoreFlags, StoreRequest
from kvperf.pipeline.request.stored import DbPushRequest
from kvperf.pipeline.world import World
from kvperf.store.migrations import CURRENT_VERSION
from kvperf.store.push import PushResult

__all__ = ["Migrated", "PushResult", "Pushed", "db_migrate", "db_push", "db_push_request"]


def db_push_request(files: tuple[Path, ...], store: StoreFlags) -> DbPushRequest:
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    return DbPushRequest(files, store_request(store))


@dataclass(frozen=True)
class Pushed:
    """The files pushed, what each added, into which database (credentials redacted)."""

    database: str
    files: tuple[PushResult, ...]


def db_push(request: DbPushRequest, world: World,
            pushed: Callable[[Path, PushResult], None]) -> Pushed:
    """Each file in its own transaction, ``pushed`` told as it is stored."""
    results: list[PushResult] = []

    def told(path: Path, result: PushResult) -> None:
        results.append(result)
        pushed(path, result)

    stored.db_push(request, world, told)
    return Pushed(request.store.name, tuple(results))


@dataclass(frozen=True)
class Migrated:
    """The database, the schema version it is at now, the versions this migration applied
    (none: it was up to date)."""

    database: str
    version: int
    applied: tuple[int, ...]


def db_migrate(store: StoreRequest) -> Migrated:
    return Migrated(store.name, CURRENT_VERSION, tuple(stored.db_migrate(store)))
