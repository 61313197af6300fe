"""``kvperf run --client NAME…`` checked before any server (exit 2): the clients known,
installed and runnable here (their runtime read once), each trial's concurrency models
(``--concurrency``, else the config's ``concurrency``, else single for 1 client and pool
for more), and every trial × model the harness contract can express."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvperf.clients.install import missing_runtime, runtime_of
from kvperf.clients.manifest import Subject, discover, search_dirs, select
from kvperf.clients.workload import default_model, unsupported
from kvperf.config.model import BenchmarkSpec
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Concurrency, Measure, Mode
from kvperf.pipeline.run.model import RunOptions
from kvperf.plan.trial import Trial

KVLOAD = "kvload"  # --client kvload: the config's own trial with kvload, the reference line


@dataclass(frozen=True)
class ClientPlan:
    """The clients of a run and the models each trial runs under."""

    subjects: tuple[Subject, ...] = ()
    models: dict[int, tuple[Concurrency, ...]] = field(default_factory=dict)
    reference: bool = False  # kvload runs each trial too


def _refuse_options(options: RunOptions) -> None:
    for flag, given in (("--measure", options.measure != Measure.TIMING),
                        ("--profile", options.profile is not None),
                        ("--mode server", options.mode == Mode.SERVER),
                        ("--tool", options.tool is not None)):
        if given:
            raise UsageError(f"{flag} does not apply with --client (a client harness is "
                             "timed as it runs)")


def subjects(names: tuple[str, ...], options: RunOptions) -> tuple[Subject, ...]:
    """The named clients (kvload aside), installed and runnable; UsageError otherwise."""
    known = discover(search_dirs(options.clients_dirs))
    chosen = select(known, [n for n in names if n != KVLOAD])
    found = []
    for manifest in chosen:
        if not manifest.installed:
            raise UsageError(f"client {manifest.name} is not installed: run kvperf clients "
                             f"install {manifest.name} (nothing is installed at run time)")
        problem = missing_runtime(manifest)
        if problem:
            raise UsageError(f"client {manifest.name} cannot run here: {problem}")
        found.append(Subject(manifest, runtime_of(manifest)))
    return tuple(found)


def plan_clients(options: RunOptions, specs: list[BenchmarkSpec],
                 trials: list[Trial]) -> ClientPlan:
    """Every check of a --client run (module doc); an empty plan without --client."""
    if not options.clients:
        given = [s.index for s in specs if s.concurrency]
        if given:
            raise UsageError(f"config object {given[0]}: 'concurrency' applies to client "
                             "harnesses (kvperf run --client NAME)")
        if options.concurrency is not None:
            raise UsageError("--concurrency applies with --client NAME")
        return ClientPlan()
    _refuse_options(options)
    found = subjects(options.clients, options)
    by_index = {s.index: s for s in specs}
    models: dict[int, tuple[Concurrency, ...]] = {}
    for trial in trials:
        spec = by_index.get(trial.spec_index)
        chosen = ((options.concurrency,) if options.concurrency is not None
                  else spec.concurrency if spec is not None and spec.concurrency
                  else (default_model(trial.load.clients),))
        for model in chosen:
            reason = unsupported(trial, model) if found else None
            if reason:
                raise UsageError(f"config object {trial.spec_index}: {reason}")
        models[trial.index] = chosen
    return ClientPlan(found, models, KVLOAD in options.clients)
