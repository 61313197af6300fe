"""Opening the store: which database (--db / KVPERF_DB / a SQLite file in the results dir),
its engine, and redaction so no password ever reaches a message.

URLs: ``postgresql://`` and ``postgres://`` map to the psycopg 3 driver
(``postgresql+psycopg://``); ``sqlite:///path`` as is; a plain path is a SQLite file.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeAlias

from sqlalchemy import URL, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from kvperf.core.errors import StoreError, UsageError
from kvperf.core.redact import redact_urls
from kvperf.store.deadline import Deadline, connect_timeout
from kvperf.store.migrations import migrate

Database: TypeAlias = Engine  # what open_store returns: outside store/, an opaque handle
DatabaseUrl: TypeAlias = URL  # which database (resolve_url): outside store/, opaque too
ENV_VAR = "KVPERF_DB"
DEFAULT_FILE = "kvperf.db"
CONNECT_TIMEOUT_S = 5
_DEADLINES: weakref.WeakKeyDictionary[Engine, Deadline] = weakref.WeakKeyDictionary()
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg",
            "postgresql+psycopg": "postgresql+psycopg", "sqlite": "sqlite",
            "sqlite+pysqlite": "sqlite"}


def parse_url(text: str) -> URL:
    """A database URL (or SQLite file path) → SQLAlchemy URL; UsageError when unsupported."""
    if "://" not in text:
        return URL.create("sqlite", database=str(Path(text)))
    try:
        url = make_url(text)
    except ArgumentError:
        raise UsageError(f"--db {redact_urls(text)!r} is not a database URL "
                         "(postgresql://user@host/db, sqlite:///path, or a file path)") from None
    driver = _DRIVERS.get(url.drivername)
    if driver is None:
        raise UsageError(f"--db {redact(url)}: unsupported database {url.drivername!r} "
                         "(use postgresql://… or sqlite:///…)")
    return url.set(drivername=driver)


def resolve_url(flag: str | None, results_dir: Path,
                environ: Mapping[str, str] = os.environ) -> URL:
    """--db, else $KVPERF_DB, else ``<results_dir>/kvperf.db``."""
    text = flag or environ.get(ENV_VAR)
    if text:
        return parse_url(text)
    return URL.create("sqlite", database=str(results_dir / DEFAULT_FILE))


def redact(url: URL) -> str:
    """The URL for messages, its credentials replaced by *** (core/redact.py)."""
    return redact_urls(url.render_as_string(hide_password=False))


def scrub(message: str, url: URL) -> str:
    """A driver's message with the URL's password (if any) removed."""
    return message.replace(url.password, "***") if url.password else message


def describe_error(exc: BaseException, url: URL) -> str:
    """One line: what the database driver said, without secrets."""
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = " ".join(str(original).split()) or type(original).__name__
    return scrub(text, url)


@contextmanager
def database_errors(url: URL, what: str, hint: str = "") -> Iterator[None]:
    """A database error inside becomes one StoreError: ``<what>: <driver's message><hint>``."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise StoreError(f"{what}: {describe_error(exc, url)}{hint}") from None


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(url: URL, timeout: float | None = None) -> Engine:
    """An engine (no connection yet). PostgreSQL: connect timeout (no longer than ``timeout``
    when given), dead connections re-tried."""
    try:
        if url.get_backend_name() == "sqlite":
            if url.database and url.database != ":memory:":
                Path(url.database).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url)
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        return create_engine(url, pool_pre_ping=True, pool_size=2,
                             connect_args={"connect_timeout": (
                                 CONNECT_TIMEOUT_S if timeout is None
                                 else connect_timeout(timeout))})
    except (NoSuchModuleError, SQLAlchemyError, OSError) as exc:
        raise StoreError(f"cannot open database {redact(url)}: {describe_error(exc, url)}"
                         ) from None


def open_store(url: URL, timeout: float | None = None) -> Engine:
    """An engine on a reachable database at the current schema version (StoreError if not).
    With ``timeout`` (PostgreSQL only), the engine's work is bounded by a client-side
    deadline (store/deadline.py; ``deadline_of``), opening it included."""
    engine = make_engine(url, timeout)
    deadline = None
    if timeout is not None and url.get_backend_name() == "postgresql":
        deadline = _DEADLINES[engine] = Deadline(engine, timeout)
    try:
        with deadline.bound(f"cannot use database {redact(url)}") if deadline else nullcontext():
            migrate(engine)
    except (SQLAlchemyError, StoreError) as exc:
        engine.dispose()
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"cannot use database {redact(url)}: {describe_error(exc, url)}"
                         ) from None
    return engine


def deadline_of(engine: Engine) -> Deadline | None:
    """The client-side deadline ``open_store`` attached to the engine, if any."""
    return _DEADLINES.get(engine)
