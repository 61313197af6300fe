"""The one runner: units of work (config-matrix trials, definitions' tests, module
scenarios — pipeline/model.Work) one after another, each on the servers the Launcher
starts and read through the Probe, its measure stage sampled for interference (the
Watcher), a disturbed one rerun once under --retry-disturbed, every row persisted
(database first, then metrics.json) as soon as it is built."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from kvperf.core.errors import DriverError, Interrupted, KvperfError, ServerError
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.run.client_work import ClientMatrix
from kvperf.pipeline.run.model import (
    Batch,
    Bench,
    HandleCpuProbe,
    LiveProbe,
    LiveWatcher,
    Observer,
    Prepared,
    Probe,
    RunSummary,
    SilentObserver,
    Watcher,
    Work,
)
from kvperf.pipeline.run.trial_run import Matrix
from kvperf.pipeline.world import Launcher, ServerHandle
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import Row, TrialOutcome, is_disturbed
from kvperf.server.binary import ServerBinary
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import ConnectionLost, Endpoint, RespError
from kvperf.server.tls import TlsFiles, make_tls_files
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")


@dataclass
class _Held:
    """A server kept for the consecutive works of one key (a module group's)."""

    key: Hashable
    stack: contextlib.ExitStack[bool | None]
    handle: ServerHandle | None
    failure: str | None


@dataclass
class _Kept:
    """A definition test's server kept after it, its data as the test found it, for the
    next test that may reuse it (the same ``key``: dataset identity and server spec)."""

    key: Hashable
    stack: contextlib.ExitStack[bool | None]
    handle: ServerHandle
    left_by: str


class Runner:
    """Runs a batch's units of work one after another, persisting every row. A Prepared
    (the config matrix) runs as its trials."""

    def __init__(self, batch: Batch | Prepared, observer: Observer | None = None,
                 store: TrialWriter | None = None, launcher: Launcher = ServerGroup,
                 probe: Probe | None = None, policy: InterferencePolicy | None = None,
                 watcher: Watcher | None = None) -> None:
        self.batch: Batch = matrix(batch) if isinstance(batch, Prepared) else batch
        self.launcher = launcher
        self.policy = policy or InterferencePolicy()
        self.watcher: Watcher = watcher or LiveWatcher()
        self.probe: Probe = probe or LiveProbe()
        self.observer: Observer = observer or SilentObserver()
        self.metrics = MetricsFile(self.batch.out_dir / "metrics.json")
        self.store = store
        self._tls: TlsFiles | None = None
        self._held: _Held | None = None
        self._kept: _Kept | None = None

    @property
    def blocked(self) -> str | None:
        return self.batch.blocked

    def tls_files(self) -> TlsFiles:
        if self._tls is None:
            self._tls = make_tls_files(self.batch.out_dir / "tls")
        return self._tls

    def execute(self) -> RunSummary:
        summary = RunSummary(metrics_path=self.metrics.path)
        works = self.batch.works()
        try:
            for position, work in enumerate(works, 1):
                self.observer.started(work, position, len(works))
                row = self.run_trial(work)
                self.persist(row)
                summary.rows.append(row)
                self.observer.finished(work, row)
        finally:
            self.release()
        return summary

    def persist(self, row: Row) -> None:
        """Database first (its own transaction), then metrics.json: a kill between the two
        leaves every row of metrics.json in the database. A database failure is counted by
        the writer and never stops the run."""
        if self.store is not None:
            self.store.record(row, self.metrics.path)
        self.metrics.append(row)

    def run_trial(self, work: Work, sync: Callable[[str], None] | None = None) -> Row:
        """One unit of work into its row; what fails it is the row's error. A disturbed
        one is run once more under --retry-disturbed (a duet's partners — ``sync`` — are
        rerun by the interleaver, round and all)."""
        row = self.attempt(work, sync)
        if sync is None and self.wants_retry(row):
            log.warning("%s was disturbed (%s): running it once more", work.name,
                        _cause(row))
            row = retried(self.attempt(work), row)
        return self.settle(row)

    def wants_retry(self, row: Row) -> bool:
        return self.policy.retry and is_disturbed(row)

    def settle(self, row: Row) -> Row:
        """A disturbed row that remains: excluded from timing statistics under
        --exclude-disturbed, else kept as it is (marked)."""
        record = row.get("interference")
        if record and record.get("disturbed") and self.policy.exclude:
            record["excluded"] = True
        return row

    def attempt(self, work: Work, sync: Callable[[str], None] | None = None) -> Row:
        """One unit of work into its row, once."""
        if self._held is not None and self._held.key != work.shared_server:
            self.release()
        work.log_dir.mkdir(parents=True, exist_ok=True)
        outcome = TrialOutcome()
        log.info("%s: %s", work.name, work.describe())
        if self.blocked:
            outcome.error = self.blocked
            return work.row(outcome, datetime.now(UTC).astimezone())
        bench = Bench(work, outcome, self.observer, self.probe, self.launcher, self._servers,
                      self.tls_files, sync, self.watcher, self.policy.threshold,
                      kept=self._kept_by)
        try:
            work.execute(bench)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError, OSError) as exc:
            outcome.error = outcome.error or str(exc)
        if outcome.error:
            log.warning("%s failed: %s", work.name, outcome.error)
        return work.row(outcome, datetime.now(UTC).astimezone())

    def release(self) -> None:
        """Stop a server kept for a key's works, and a definition test's kept one."""
        held, self._held = self._held, None
        if held is not None:
            held.stack.close()
        self.release_kept()

    def release_kept(self) -> None:
        """Stop the server a definition test left for the next (by its pids)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.stack.close()

    def _kept_by(self, work: Work, key: Hashable | None) -> str | None:
        """Who left the kept server when ``key`` is its key; else it is stopped now
        (before ``work`` starts its own) and the log says why."""
        kept = self._kept
        if kept is not None and kept.key == key:
            return kept.left_by
        if kept is not None:
            log.info("%s: server of %s stopped, not reused%s", work.name, kept.left_by,
                     " (another dataset or server spec)" if key is not None else "")
            self.release_kept()
        return None

    def _take_kept(self, bench: Bench) -> _Kept | None:
        """The kept server when the work asks for its key (it is the work's now)."""
        kept = self._kept
        if kept is None or bench.reuse_key is None or kept.key != bench.reuse_key:
            self.release_kept()
            return None
        self._kept = None
        return kept

    def _keep(self, bench: Bench, stack: contextlib.ExitStack[bool | None],
              group: ServerHandle) -> None:
        """Keep the work's server for the next work of its key when it asked to (its data
        unchanged) and nothing failed; else it stops with ``stack``. Either way what the
        work gave to run once the server stops runs then."""
        if bench.keep is None:
            return
        stack.callback(bench.keep)
        if bench.reuse_key is not None and not bench.outcome.error:
            self._kept = _Kept(bench.reuse_key, stack.pop_all(), group, bench.work.name)

    def _shared(self, key: Hashable, binary: ServerBinary, setup: ServerSetup, bench: Bench,
                tls: TlsFiles | None, **wrapping: object) -> ServerHandle:
        """The server kept for ``key``'s works, started by the first (with its wrapping:
        callgrind under --measure instructions)."""
        if self._held is None:
            stack = contextlib.ExitStack()
            try:
                handle: ServerHandle | None = stack.enter_context(
                    self.launcher(binary, setup, bench.work.log_dir, tls, **wrapping))
                failure = None
            except (KvperfError, OSError) as exc:
                handle, failure = None, f"server did not start: {exc}"
            self._held = _Held(key, stack, handle, failure)
        if self._held.handle is None:
            raise ServerError(self._held.failure or "server did not start")
        return self._held.handle

    @contextlib.contextmanager
    def _servers(self, bench: Bench, binary: ServerBinary, setup: ServerSetup,
                 tls: TlsFiles | None, client: str | None, **wrapping: object
                 ) -> Iterator[ServerHandle]:
        work, outcome = bench.work, bench.outcome
        with contextlib.ExitStack() as stack:
            key = work.shared_server
            kept = self._take_kept(bench)
            if key is not None:
                group = self._shared(key, binary, setup, bench, tls, **wrapping)
            elif kept is not None:  # no start: a definition test's kept server
                group = kept.handle
                stack.enter_context(kept.stack)
            else:
                group = self.launcher(binary, setup, work.log_dir, tls, **wrapping)
                with bench.stage("server_start"):
                    stack.enter_context(group)
            log.info("%s: server pids %s at %s", work.name, " ".join(map(str, group.pids)),
                     " ".join(map(str, group.endpoints)))
            remote_cpu = getattr(group, "cpu_seconds", None)  # a server on another host
            if callable(remote_cpu):
                bench.probe = HandleCpuProbe(bench.probe, remote_cpu)
            else:
                bench.server_pids = list(group.pids)
            outcome.pinning = {"server": group.pinning(), "client": client}
            applied = group.effective_config()
            if applied:
                outcome.checks["server_config"] = applied
            try:
                yield group
            except (DriverError, ServerError, ConnectionLost) as exc:
                outcome.error = _blame(group, exc)
            else:
                outcome.error = group.health()
            self._keep(bench, stack, group)


def matrix(prepared: Prepared) -> Batch:
    """The config matrix as a batch: its trials, or (--client) each trial run by every
    client harness under each of its concurrency models (kvload too when asked)."""
    if prepared.subjects or prepared.options.clients:
        return ClientMatrix(prepared, prepared.subjects, prepared.models, prepared.reference)
    return Matrix(prepared)


def _cause(row: Row) -> str:
    return str((row.get("interference") or {}).get("cause")
               or "a duet partner's trial was disturbed")


def retried(new: Row, first: Row) -> Row:
    """The row of a rerun work, saying it is the second attempt and why the first was
    dropped."""
    record = new.get("interference")
    if record is not None:
        record["attempt"], record["retried"] = 2, _cause(first)
    return new


def _blame(group: ServerHandle, exc: Exception) -> str:
    """Prefer the server's own failure (crash, kill) over the tool's view of it."""
    time.sleep(0.2)  # let a dying server finish writing its log / exit status
    health = group.health()
    return f"{health} (tool: {exc})" if health else str(exc)


def serve(prepared: Prepared, announce: Callable[[list[Endpoint]], None],
          wait: Callable[[], None], launcher: Launcher = ServerGroup) -> None:
    """--mode server: start the first trial's server setup (on --bind/--port, with the
    password as requirepass), announce it, wait, tear down."""
    assert prepared.binary is not None
    options, setup = prepared.options, prepared.trials[0].server
    tls = make_tls_files(prepared.out_dir / "tls", options.bind) if setup.tls else None
    with launcher(prepared.binary, setup, prepared.out_dir / "server", tls,
                  bind=options.bind, port=options.port, password=options.password) as group:
        announce(group.endpoints)
        wait()
