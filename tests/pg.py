"""A throwaway PostgreSQL 15 cluster in a temp dir, for tests and benchmarks.

``PgCluster`` runs initdb into a fresh directory, starts ``postgres`` on a free loopback port
with its unix socket inside that directory, and stops it by pid. initdb refuses to run as
root, so as root the cluster belongs to ``nobody`` (its directory is chowned to it). The
superuser ``kvperf`` has a password, so URLs carry a secret the way real ones do (and tests
can check it is never printed).

Fixtures (registered in tests/conftest.py):
  pg_cluster — session-scoped cluster, started once per test session.
  pg_url     — a fresh, empty database on it per test (``postgresql+psycopg://…``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

PG_BIN = Path(os.environ.get("KVPERF_PG_BIN", "/usr/lib/postgresql/15/bin"))
USER = "kvperf"
PASSWORD = "s3cret-pw"  # a test secret: tests assert it never appears in output


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _owner() -> pwd.struct_passwd | None:
    """The unprivileged account the cluster runs as when we are root (else: ourselves)."""
    return pwd.getpwnam("nobody") if os.geteuid() == 0 else None


class PgCluster:
    """One PostgreSQL cluster: ``start``, ``stop`` (by pid), ``url``, ``create_database``."""

    def __init__(self) -> None:
        for name in ("initdb", "postgres"):
            assert (PG_BIN / name).is_file(), (
                f"{PG_BIN / name} not found: install Debian's postgresql-15 (scripts/test does)")
        self.root = Path(tempfile.mkdtemp(prefix="kvperf-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._owner = _owner()
        self._initdb()

    def _as_owner(self) -> dict[str, Any]:
        if self._owner is None:
            return {}
        return {"user": self._owner.pw_uid, "group": self._owner.pw_gid, "extra_groups": []}

    def _initdb(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if self._owner:
            for path in (self.root, pwfile):
                os.chown(path, self._owner.pw_uid, self._owner.pw_gid)
        subprocess.run(
            [str(PG_BIN / "initdb"), "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}",
             "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8",
             "--locale=C.UTF-8"],
            check=True, capture_output=True, cwd=self.root, env=self._env(),
            **self._as_owner())
        pwfile.unlink()

    def _env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8", "HOME": str(self.root)}

    def start(self) -> None:
        """Start postgres (again) on the same port and wait until it accepts connections."""
        log = (self.root / "postgres.log").open("ab")
        self.process = subprocess.Popen(
            [str(PG_BIN / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-k", str(self.root), "-c", "listen_addresses=127.0.0.1",
             "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=60"],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.root, env=self._env(),
            **self._as_owner())
        log.close()
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process and self.process.poll() is None, (
                "postgres exited: " + (self.root / "postgres.log").read_text()[-2000:])
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise AssertionError(f"postgres not ready after {timeout}s")

    def stop(self, immediate: bool = False) -> None:
        """Stop the postmaster we started (SIGINT: fast shutdown; SIGQUIT: immediate)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT if immediate else signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def dsn(self, database: str) -> str:
        return (f"host=127.0.0.1 port={self.port} user={USER} password={PASSWORD} "
                f"dbname={database}")

    def url(self, database: str, driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        self.stop(immediate=True)
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_cluster() -> Iterator[PgCluster]:
    """A started cluster, removed (stopped by pid, directory deleted) on exit."""
    cluster = PgCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()
