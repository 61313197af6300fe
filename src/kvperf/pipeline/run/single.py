"""`kvperf run` on one server: the config matrix — a --valkey-path tree built first when it
has no server, then its plan (--dry-run), --mode server until Ctrl-C, or every trial run
(here or on --server-host) with the live store, logs.txt and the gates judged at the end —
and module scenarios (``test_groups`` configs), every row persisted as it finishes."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kvperf.analysis.gates import GateResult
from kvperf.core.errors import Interrupted
from kvperf.core.kinds import Mode
from kvperf.pipeline.request.run import ModulesRequest, RunRequest
from kvperf.pipeline.run.builds import BuildObserver, build_tree
from kvperf.pipeline.run.gates import finish_gates
from kvperf.pipeline.run.logs import log_to
from kvperf.pipeline.run.model import Observer, Prepared, RunSummary
from kvperf.pipeline.run.modules import ModuleRun, prepare_modules
from kvperf.pipeline.run.prepare import prepare
from kvperf.pipeline.run.rate_sweep import SweepBatch, ordinary, sweeping
from kvperf.pipeline.run.rate_sweep import check as check_sweep
from kvperf.pipeline.run.runner import Runner, matrix, serve
from kvperf.pipeline.run.storage import Persisted, execute_persisting, live_store
from kvperf.pipeline.world import Launcher, World
from kvperf.server.resp import Endpoint
from kvperf.store.writer import TrialWriter


class RunHooks(BuildObserver, Protocol):
    def progress(self, trials: int) -> contextlib.AbstractContextManager[Observer]: ...

    def serving(self, prepared: Prepared) -> None: ...

    def listening(self, endpoints: list[Endpoint]) -> None: ...


@dataclass
class MatrixRun:
    """What `kvperf run` did: planned only (--dry-run), served (--mode server), ran every
    trial (``summary``, the gates judged), or was interrupted (``kept`` rows in ``path``)."""

    prepared: Prepared
    summary: RunSummary | None = None
    gates: list[GateResult] | None = None
    store: TrialWriter | None = None
    interrupted: Persisted[RunSummary] | None = None

    def check_store(self) -> None:
        """StoreError (exit 1) if some finished trials did not reach the database."""
        if self.store is not None:
            self.store.check()


def run_matrix(request: RunRequest, world: World, hooks: RunHooks) -> MatrixRun:
    """The workflow (module doc)."""
    options = request.options
    if request.tree is not None and options.valkey_path is not None:
        build_tree(options.valkey_path, request.tree, world, hooks)
    prepared = prepare(options)
    check_sweep(prepared)
    if request.dry_run:
        return MatrixRun(prepared)
    log_to(prepared.out_dir, echo=request.log_level)
    if options.mode == Mode.SERVER:
        hooks.serving(prepared)
        serve_until_interrupted(prepared, hooks.listening, world.launcher)
        return MatrixRun(prepared)
    clients = bool(prepared.subjects or options.clients)  # their sweeps: the client matrix's
    batch = SweepBatch(prepared) if sweeping(prepared) and not clients else matrix(prepared)
    with (world.servers(request.remote) as launcher,
          live_store(request.store, world) as writer,
          hooks.progress(len(batch.works())) as observer):
        runner = Runner(batch, observer, writer, launcher=launcher,
                        policy=request.interference)
        try:
            summary = runner.execute()
        except Interrupted:
            kept = Persisted[RunSummary](None, len(runner.metrics.new_rows),
                                         runner.metrics.path)
            return MatrixRun(prepared, interrupted=kept)
    gates = (finish_gates(prepared.gates, ordinary(summary.rows), prepared.out_dir)
             if prepared.gates is not None else None)
    return MatrixRun(prepared, summary, gates, writer)


def serve_until_interrupted(prepared: Prepared, listening: Callable[[list[Endpoint]], None],
                            launcher: Launcher) -> None:
    """--mode server: the server up until Ctrl-C (or SIGTERM) after it was announced, the
    normal way out; an interruption before that is raised."""
    announced = threading.Event()

    def announce(endpoints: list[Endpoint]) -> None:
        announced.set()  # first: a Ctrl-C right after the announcement is printed is normal
        listening(endpoints)

    def wait() -> None:
        with contextlib.suppress(KeyboardInterrupt, Interrupted):
            threading.Event().wait()

    try:
        serve(prepared, announce, wait, launcher)
    except (KeyboardInterrupt, Interrupted):
        if not announced.is_set():
            raise


class ScenarioHooks(Protocol):
    def notes(self, notes: tuple[str, ...]) -> None: ...

    def scenarios(self) -> Observer: ...


@dataclass
class ModulesRan:
    run: ModuleRun
    persisted: Persisted[RunSummary]


def run_modules(request: ModulesRequest, world: World, hooks: ScenarioHooks) -> ModulesRan:
    """Module scenarios: datasets, server and kvload checked (pipeline/run/modules.py), then
    every selected scenario run, each row persisted as it finishes."""
    run = prepare_modules(request.options)
    hooks.notes(run.notes)
    log_to(run.out_dir)
    persisted = execute_persisting(
        request.store, world,
        lambda store: Runner(run, hooks.scenarios(), store, world.launcher,
                             policy=request.interference))
    return ModulesRan(run, persisted)
