"""The seams a command's work touches the world through: builds (git and make), the servers
of a trial (here, or on ``--server-host`` over SSH) and the database. ``World()`` holds the
real ones; the CLI's unit tests pass recording fakes, which prove that bad input is refused
before any of them is used (hyperfine's Executor: the one thing that differs in tests)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol

from kvperf.core.proc import LineSink
from kvperf.pipeline.request.common import BuildRequest, RemoteRequest
from kvperf.server.instance import ServerGroup
from kvperf.server.remote import SshHost
from kvperf.server.resp import Endpoint
from kvperf.sourcebuild.builder import Build, Builder, build_source_tree
from kvperf.sourcebuild.git_log import CommitInfo
from kvperf.store.db import Database, DatabaseUrl, open_store


class Builds(Protocol):
    """Refs of one repository built into the cache (sourcebuild/builder.Builder)."""

    repo: str
    jobs: int
    make_args: tuple[str, ...]

    def resolve(self, ref: str) -> str: ...

    def first_parent_range(self, good: str, bad: str) -> list[CommitInfo]: ...

    def cached(self, sha: str) -> Path | None: ...

    def build(self, ref: str, sha: str, on_line: LineSink | None = None) -> Build: ...


def builder(request: BuildRequest) -> Builds:
    return Builder(request.cache, request.repo, request.make_args, request.jobs)


def tree_builder(tree: Path, request: BuildRequest, on_line: LineSink | None) -> Build:
    """--valkey-path: the tree's server, built in place first when it has none."""
    return build_source_tree(tree, request.cache, request.make_args, request.jobs, on_line)


@contextlib.contextmanager
def remote_host(request: RemoteRequest) -> Iterator[Launcher]:
    """--server-host: the SSH control connection, open for the whole run; its Launcher."""
    with SshHost(request.target, request.ssh_config, request.server_bin,
                 request.ports) as host:
        yield host.launcher()


@dataclass(frozen=True)
class World:
    builder: Callable[[BuildRequest], Builds] = builder
    tree_builder: Callable[[Path, BuildRequest, LineSink | None], Build] = tree_builder
    launcher: Launcher = ServerGroup  # a trial's servers here
    remote: Callable[[RemoteRequest], contextlib.AbstractContextManager[Launcher]] = \
        remote_host
    store: Callable[[DatabaseUrl, float | None], Database] = open_store

    @contextlib.contextmanager
    def servers(self, remote: RemoteRequest | None) -> Iterator[Launcher]:
        """Where a run's servers start: here, or on the remote host for the whole run."""
        if remote is None:
            yield self.launcher
            return
        with self.remote(remote) as launcher:
            yield launcher

    @contextlib.contextmanager
    def database(self, url: DatabaseUrl, timeout: float | None = None) -> Iterator[Database]:
        """The database at the current schema (StoreError if it cannot be used), disposed
        on leaving."""
        engine = self.store(url, timeout)
        try:
            yield engine
        finally:
            engine.dispose()


class ServerHandle(Protocol):
    """A trial's running server nodes (``server.instance.ServerGroup``): ``with`` starts
    them ready, leaving stops every pid kvperf started."""

    @property
    def endpoints(self) -> list[Endpoint]: ...

    @property
    def pids(self) -> list[int]: ...

    @property
    def replica_endpoints(self) -> list[Endpoint]: ...

    def __enter__(self) -> ServerHandle: ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def pinning(self) -> str | None: ...

    def effective_config(self) -> dict[str, str]: ...

    def health(self) -> str | None: ...


# Starts a trial's servers: called as launcher(binary, setup, log_dir, tls, **wrapping) with
# pipeline/instructions.server_wrapping's keywords; ServerGroup (the class) is the real one.
Launcher = Callable[..., ServerHandle]
