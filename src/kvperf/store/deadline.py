"""A client-side time limit on database work, so a database that stops answering (a hung or
SIGSTOPped PostgreSQL: the kernel still accepts and acknowledges, nobody replies) cannot block
a run forever.

A server-side ``statement_timeout`` needs a server that runs; this one is enforced here. The
engine's open DBAPI connections are tracked (``connect``/``close`` events); ``Deadline.bound``
arms a timer around a block, and when it fires every tracked connection's socket is shut down
(``shutdown(2)`` on a duplicate of its descriptor: the driver's blocked wait returns at once
and the driver raises its own "connection lost" error, which SQLAlchemy wraps and invalidates)
and every new connection attempt inside the block is refused. The block then ends with a
``DeadlineExceeded`` naming the bound. The connect attempt itself is bounded by the driver's
``connect_timeout`` (store/db.py sets it no longer than this bound).
"""

from __future__ import annotations

import math
import os
import socket
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import SQLAlchemyError

from kvperf.core.errors import StoreError, UsageError

ENV_VAR = "KVPERF_DB_TIMEOUT"
DEFAULT_SECONDS = 10.0


class DeadlineExceeded(StoreError):
    """The database did not answer within the bound."""


def parse_seconds(text: str, what: str = "--db-timeout") -> float:
    """A positive number of seconds, or UsageError naming ``what``."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what} {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{what} {text!r} must be a positive number of seconds")
    return value


def resolve_seconds(flag: float | None, environ: dict[str, str] | None = None) -> float:
    """--db-timeout, else $KVPERF_DB_TIMEOUT, else 10 s."""
    if flag is not None:
        return flag
    text = (os.environ if environ is None else environ).get(ENV_VAR)
    return parse_seconds(text, f"${ENV_VAR}") if text else DEFAULT_SECONDS


def connect_timeout(seconds: float) -> int:
    """libpq's connect_timeout (whole seconds, at least 2) no longer than needed."""
    return max(2, min(5, math.ceil(seconds)))


def _shut(dbapi_conn: Any) -> None:
    """Shut down a psycopg connection's socket from another thread (the fd stays valid)."""
    import psycopg  # here: only PostgreSQL engines get here, and psycopg costs every
    # other command ~0.1 s at startup

    try:
        fd = dbapi_conn.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, psycopg.Error, AttributeError):
        pass  # already closed: nothing to unblock


class Deadline:
    """The time limit of one engine's database work (only PostgreSQL needs one)."""

    def __init__(self, engine: Engine, seconds: float) -> None:
        self.seconds = seconds
        self._open: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._expired = False
        event.listen(engine, "connect", self._on_connect)
        event.listen(engine, "do_connect", self._on_do_connect)

    def _on_connect(self, dbapi_conn: Any, _record: Any) -> None:
        with self._lock:
            self._open.add(dbapi_conn)

    def _on_do_connect(self, *_args: Any) -> None:
        if self._expired:
            import psycopg  # see _shut

            raise psycopg.OperationalError(f"no answer within {self.seconds:g} s")

    def _fire(self) -> None:
        with self._lock:
            self._expired = True
            connections = list(self._open)
        for conn in connections:
            _shut(conn)

    @contextmanager
    def bound(self, what: str) -> Iterator[None]:
        """Run the block within the bound; a database error after the bound expired becomes
        DeadlineExceeded (a StoreError) naming it. A block that finished is left alone."""
        timer = threading.Timer(self.seconds, self._fire)
        timer.daemon = True
        self._expired = False
        timer.start()
        try:
            yield
        except SQLAlchemyError:
            if not self._expired:
                raise
            raise DeadlineExceeded(f"{what}: the database did not answer within "
                                   f"{self.seconds:g} s (--db-timeout)") from None
        finally:
            timer.cancel()
            self._expired = False
