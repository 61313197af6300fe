"""``kvperf bisect GOOD BAD --client NAME --client-repo R``: the bisection of
pipeline/bisect.py (its search, log, batches and --resume) over a client library's commits.

``ClientBench`` is the bisection's Bench: a commit's "build" is the harness installed with
its library at that commit (clients/checkout.py: ``NAME@SHA``, from the release's install,
no download), a batch is GOOD's and the commit's client sides interleaved on one server
(the default, as ``compare --client``), each side one client (``Side.client``)."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from kvperf.clients.checkout import at_commit
from kvperf.clients.install import install
from kvperf.clients.manifest import Manifest, cache_root, discover, search_dirs, select
from kvperf.core.errors import KvperfError, UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.plan import Plan
from kvperf.pipeline.bisect import BenchHooks, BisectHooks, BisectResult, bisect, settle
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.sides import SidesRequest
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import run_interleaved
from kvperf.pipeline.sides.sides import Side
from kvperf.pipeline.world import World
from kvperf.sourcebuild import git as mirrors
from kvperf.sourcebuild.builder import Build
from kvperf.sourcebuild.git_log import CommitInfo

log = logging.getLogger(__name__)


class ClientBench:
    """The bisection's Bench over a client library's repository (module doc)."""

    def __init__(self, request: BisectRequest, release: Manifest, dirs: tuple[Path, ...],
                 world: World, hooks: BenchHooks) -> None:
        self.request, self.release, self.dirs = request, release, dirs
        self.world, self.hooks = world, hooks
        self.results: list[SidesResult] = []

    def mirror(self) -> Path:
        with self.hooks.fetching(self.request.repo):
            return mirrors.update_mirror(cache_root(), self.request.repo)

    def resolve(self, ref: str) -> str:
        return mirrors.resolve_ref(self.mirror(), ref)

    def commits(self, good: str, bad: str) -> list[CommitInfo]:
        return mirrors.first_parent_range(self.mirror(), good, bad)

    def build(self, sha: str) -> Build:
        """The harness with the library at ``sha``, installed (a failed install blocks that
        side: its trials fail with the reason, as a failed server build's do)."""
        started = time.monotonic()
        info = mirrors.commit_info(self.mirror(), sha)
        try:
            manifest = at_commit(self.release, self.request.repo, sha)
            done = install(manifest, log.info)
        except KvperfError as exc:
            return Build(sha, sha, None, str(exc), time.monotonic() - started, False, None,
                         info)
        return Build(sha, sha, manifest.install_dir, None, time.monotonic() - started,
                     done.already, None, info)

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult:
        """GOOD's and the commit's client sides interleaved on one default server."""
        clients = [replace(side, server_bin=None, client=f"{self.release.name}@{side.commit}",
                           label=f"{self.release.name}@{(side.commit or '')[:12]}")
                   for side in sides]
        request = replace(request, clients=tuple(s.client for s in clients if s.client),
                          clients_dirs=self.dirs, client_repos=(self.request.repo,))
        result, _ = run_interleaved(request, clients, self.request.store, None, self.world,
                                    self.hooks)
        self.results.append(result)
        return result

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult:
        raise UsageError("bisect --client runs the config's matrix with the harness, not "
                         "--definitions")

    def check_stores(self) -> None:
        for done in self.results:
            done.check_store()


def run_client_bisect(request: BisectRequest, client: str, dirs: tuple[Path, ...],
                      world: World, hooks: BisectHooks) -> BisectResult:
    """Every check first (exit 2), then the bisection over the library's commits."""
    if request.measure not in (None, Measure.TIMING):
        raise UsageError("bisect --client measures timing (a harness is timed as it runs)")
    request = settle(replace(request, measure=Measure.TIMING))
    (release,) = select(discover(search_dirs(dirs)), [client])
    if release.checkout is None or not release.installed:
        at_commit(release, request.repo, request.good)  # raises UsageError saying why
    bench = ClientBench(request, release, dirs, world, hooks)
    result = bisect(request, bench, hooks)
    bench.check_stores()
    return result
