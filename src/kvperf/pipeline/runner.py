"""Running a prepared plan: trial after trial, each on fresh servers, every row persisted
(database first, then metrics.json) as soon as it is built."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from kvperf.core.cpus import format_cpu_list
from kvperf.core.errors import DriverError, Interrupted, KvperfError, ServerError
from kvperf.driver.base import Target
from kvperf.pipeline.instructions import server_wrapping
from kvperf.pipeline.model import (
    HandleCpuProbe,
    Launcher,
    LiveProbe,
    Observer,
    Prepared,
    Probe,
    RunSummary,
    ServerHandle,
    SilentObserver,
)
from kvperf.pipeline.prepare import client_endpoint, client_mode
from kvperf.pipeline.trial_run import TrialRun
from kvperf.plan.trial import Trial
from kvperf.results.row import Row, build_row
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import ConnectionLost, Endpoint, RespError
from kvperf.server.tls import TlsFiles, make_tls_files
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

log = logging.getLogger("kvperf")


class Runner:
    """Executes a prepared plan, trial after trial, persisting every row."""

    def __init__(self, prepared: Prepared, observer: Observer | None = None,
                 store: TrialWriter | None = None, launcher: Launcher = ServerGroup,
                 probe: Probe | None = None) -> None:
        self.prepared = prepared
        self.launcher = launcher
        self.probe: Probe = probe or LiveProbe()
        self.observer: Observer = observer or SilentObserver()
        self.metrics = MetricsFile(prepared.out_dir / "metrics.json")
        self.store = store
        self._tls: TlsFiles | None = None

    def tls_files(self) -> TlsFiles:
        if self._tls is None:
            self._tls = make_tls_files(self.prepared.out_dir / "tls")
        return self._tls

    def execute(self) -> RunSummary:
        summary = RunSummary(metrics_path=self.metrics.path)
        total = len(self.prepared.trials)
        for position, trial in enumerate(self.prepared.trials, 1):
            self.observer.trial_started(trial, position, total)
            row = self.run_trial(trial)
            self.persist(row)
            summary.rows.append(row)
            self.observer.trial_finished(trial, row)
        return summary

    def persist(self, row: Row) -> None:
        """Database first (its own transaction), then metrics.json: a kill between the two
        leaves every row of metrics.json in the database. A database failure is counted by
        the writer and never stops the run."""
        if self.store is not None:
            self.store.record(row, self.metrics.path)
        self.metrics.append(row)

    def trial_log_dir(self, trial: Trial) -> Path:
        return self.prepared.out_dir / "trials" / f"{trial.index:04d}-{trial.id}-r{trial.run}"

    def run_trial(self, trial: Trial, sync: Callable[[str], None] | None = None
                  ) -> Row:
        log_dir = self.trial_log_dir(trial)
        log_dir.mkdir(parents=True, exist_ok=True)
        work = TrialRun(self.prepared, trial, self.observer, log_dir, self.probe, sync=sync)
        log.info("trial %d: %s", trial.index, trial.describe())
        if self.prepared.options.blocked:
            work.outcome.error = self.prepared.options.blocked
            return build_row(trial, self.prepared.context, work.outcome,
                             datetime.now(UTC).astimezone())
        try:
            self._run_on_target(work)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("interrupted") from None
        except (KvperfError, ConnectionLost, RespError) as exc:
            work.outcome.error = work.outcome.error or str(exc)
        if work.outcome.error:
            log.warning("trial %d failed: %s", trial.index, work.outcome.error)
        return build_row(trial, self.prepared.context, work.outcome,
                         datetime.now(UTC).astimezone())

    def _run_on_target(self, work: TrialRun) -> None:
        trial, options = work.trial, self.prepared.options
        if client_mode(options):
            target = Target((client_endpoint(options),), trial.server.cluster_mode,
                            options.tls_ca)
            work.outcome.pinning = {"server": None, "client": _client_pinning(trial)}
            work.run(target, [])
            return
        assert self.prepared.binary is not None
        tls = self.tls_files() if trial.server.tls else None
        group = self.launcher(self.prepared.binary, trial.server, work.log_dir, tls,
                              **server_wrapping(options.measure, work.log_dir))
        with contextlib.ExitStack() as stack:
            with work.stage("server_start"):
                stack.enter_context(group)
            log.info("trial %d: server pids %s at %s", trial.index,
                     " ".join(map(str, group.pids)), " ".join(map(str, group.endpoints)))
            remote_cpu = getattr(group, "cpu_seconds", None)  # a server on another host
            if callable(remote_cpu):
                work.probe = HandleCpuProbe(work.probe, remote_cpu)
            work.outcome.pinning = {"server": group.pinning(), "client": _client_pinning(trial)}
            applied = group.effective_config()
            if applied:
                work.outcome.checks["server_config"] = applied
            target = Target(tuple(group.endpoints), trial.server.cluster_mode,
                            tls.ca if tls else None)
            try:
                work.run(target, group.pids)
            except (DriverError, ServerError, ConnectionLost) as exc:
                work.outcome.error = _blame(group, exc)
            else:
                work.outcome.error = group.health()


def _blame(group: ServerHandle, exc: Exception) -> str:
    """Prefer the server's own failure (crash, kill) over the tool's view of it."""
    time.sleep(0.2)  # let a dying server finish writing its log / exit status
    health = group.health()
    return f"{health} (tool: {exc})" if health else str(exc)


def _client_pinning(trial: Trial) -> str | None:
    return format_cpu_list(trial.load.cpus) if trial.load.cpus else None


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
