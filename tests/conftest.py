"""Fixtures shared by unit and integration tests."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.corpus import corpus_root
from tests.fixtures.memtier import memtier_binary
from tests.fixtures.valkey_repo import cache_dir, fixture_repo
from tests.helpers import server_pids
from tests.pg import PgCluster, running_cluster


def pytest_configure(config: pytest.Config) -> None:
    """One temp root per test session: every process the tests start (kvperf's server dirs,
    pytest's tmp_path) makes its temp files under it, so `no_strays` tells this session's
    servers from those of another run on the same machine. Under pytest-xdist (scripts/test's
    parallel lane) each worker gets its own directory in the root: `no_strays` then counts
    only the servers of its own worker's tests. Removed after a passing session."""
    if "KVPERF_TEST_TMP" not in os.environ:  # set once, inherited by pytest's subprocesses
        root = tempfile.mkdtemp(prefix="kvt-")
        os.chmod(root, 0o755)  # initdb runs as nobody (tests/pg.py) inside it
        os.environ["KVPERF_TEST_TMP"] = root
    root = os.environ["KVPERF_TEST_TMP"]
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        root = os.path.join(root, worker)
        os.makedirs(root, mode=0o755, exist_ok=True)
        os.chmod(root, 0o755)
    tempfile.tempdir = os.environ["TMPDIR"] = root
    # run --definitions' dataset snapshots: the session's own cache, never the user's
    os.environ.setdefault("KVPERF_SNAPSHOT_CACHE", os.path.join(root, "snapshots"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    root = os.environ.get("KVPERF_TEST_TMP", "")
    if (exitstatus == 0 and Path(root).name.startswith("kvt-")
            and not os.environ.get("PYTEST_XDIST_WORKER")):
        shutil.rmtree(root, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """scripts/test's parallel lane (pytest-xdist ``--dist loadgroup``) hands tests to its
    workers one by one, except that the tests of a file with a module-scoped fixture (a
    shared server, a built wheel) form one group, run by one worker: the fixture is set up
    once, as in a serial run."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d.scope == "module" for chain in defs for d in chain):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture
def no_strays() -> Iterator[None]:
    """Fail the test if it leaves a valkey-server/redis-server behind."""
    before = server_pids()
    yield
    leftover = server_pids() - before
    assert not leftover, f"server processes left behind: {sorted(leftover)}"


@pytest.fixture(scope="session")
def valkey_repo() -> Path:
    """The Valkey 8.1.1 fixture repository (tags base, set-slow-2pct, set-slow, broken)."""
    return fixture_repo()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The unpacked redis-benchmarks-specification 0.3.47 wheel (tests/fixtures/corpus.py).
    A download that fails fails the test: the corpus is never optional."""
    return corpus_root()


@pytest.fixture(scope="session")
def memtier_oracle() -> Path:
    """The real memtier_benchmark built from the vendored tarball (tests/fixtures/memtier.py);
    a missing tarball or build dependency fails the test, naming it."""
    return memtier_binary()


@pytest.fixture(scope="session")
def build_cache() -> Path:
    """Builds shared by every test (and kept between test runs: a cold build takes minutes)."""
    path = cache_dir() / "build-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One throwaway PostgreSQL 15 cluster per test session (tests/pg.py)."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: PgCluster, request: pytest.FixtureRequest) -> str:
    """A fresh empty database on the session cluster; its SQLAlchemy URL (with password)."""
    name = "t_" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    return pg_cluster.create_database(name)
