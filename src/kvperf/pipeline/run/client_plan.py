"""``kvperf run --client NAME…`` checked before any server (exit 2): the clients known,
installed and runnable here (their runtime read once), each trial's concurrency models
(``--concurrency``, else the config's ``concurrency``, else single for 1 client and pool
for more), and every trial × model the harness contract can express."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kvperf.clients.checkout import at_commit, repo_for
from kvperf.clients.install import install, missing_runtime, runtime_of
from kvperf.clients.manifest import Subject, discover, search_dirs, select, split_key, split_ref
from kvperf.clients.workload import default_model, unsupported
from kvperf.config.model import BenchmarkSpec
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Concurrency, Measure, Mode, ProfileMode
from kvperf.pipeline.request.options import RunOptions
from kvperf.plan.trial import Trial

log = logging.getLogger(__name__)
KVLOAD = "kvload"  # --client kvload: the config's own trial with kvload, the reference line


@dataclass(frozen=True)
class ClientPlan:
    """The clients of a run and the models each trial runs under."""

    subjects: tuple[Subject, ...] = ()
    # per (subject key, trial index): the models it runs under
    models: dict[tuple[str, int], tuple[Concurrency, ...]] = field(default_factory=dict)
    reference: bool = False  # kvload runs each trial too


def _refuse_options(options: RunOptions) -> None:
    settings = options.profile
    timed = "a client harness is timed as it runs"
    whole = "a harness is profiled from its start to its exit, on-CPU samples"
    for flag, given, why in (
            ("--measure", options.measure != Measure.TIMING, timed),
            ("--profile-mode wall-time",
             settings is not None and settings.mode == ProfileMode.WALL_TIME, whole),
            ("--profile-delay/--profile-duration",
             settings is not None and (settings.delay != 0 or settings.duration is not None),
             whole),
            ("--mode server", options.mode == Mode.SERVER, timed),
            ("--tool", options.tool is not None, timed)):
        if given:
            raise UsageError(f"{flag} does not apply with --client ({why})")


def subjects(names: tuple[str, ...], options: RunOptions) -> tuple[Subject, ...]:
    """The named clients (kvload aside), installed and runnable; UsageError otherwise. A
    ``NAME@REF`` is its library at that commit of ``--client-repo``, installed here when
    it is not yet (clients/checkout.py: built from the release's install, no download)."""
    known = discover(search_dirs(options.clients_dirs))
    keys = [split_key(n) for n in dict.fromkeys(names) if n != KVLOAD]
    found = []
    for key, model in keys:
        name, ref = split_ref(key)
        (manifest,) = select(known, [name])
        if ref is not None:
            manifest = at_commit(manifest, repo_for(name, options.client_repos), ref)
            install(manifest, log.info)
        elif not manifest.installed:
            raise UsageError(f"client {manifest.name} is not installed: run kvperf clients "
                             f"install {manifest.name} (nothing is installed at run time)")
        problem = missing_runtime(manifest)
        if problem:
            raise UsageError(f"client {manifest.key} cannot run here: {problem}")
        found.append(Subject(manifest, runtime_of(manifest), model))
    if options.client_repos and not any(s.manifest.source for s in found):
        raise UsageError("--client-repo applies to a library at a commit: --client NAME@REF")
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
        if options.client_repos:
            raise UsageError("--client-repo applies to a library at a commit: --client "
                             "NAME@REF")
        return ClientPlan()
    _refuse_options(options)
    found = subjects(options.clients, options)
    by_index = {s.index: s for s in specs}
    models: dict[tuple[str, int], tuple[Concurrency, ...]] = {}
    for subject in found:
        for trial in trials:
            chosen = trial_models(subject, options, by_index.get(trial.spec_index), trial)
            for model in chosen:
                refused = subject.manifest.refuses(model)
                if refused:
                    raise UsageError(refused)
                reason = unsupported(trial, model)
                if reason:
                    raise UsageError(f"config object {trial.spec_index} ({subject.key}): "
                                     f"{reason}")
            models[(subject.key, trial.index)] = chosen
    return ClientPlan(found, models, KVLOAD in options.clients)


def trial_models(subject: Subject, options: RunOptions, spec: BenchmarkSpec | None,
                 trial: Trial) -> tuple[Concurrency, ...]:
    """The client's own (``NAME:MODEL``), else --concurrency, else the config's, else by
    clients."""
    if subject.model is not None:
        return (subject.model,)
    if options.concurrency is not None:
        return (options.concurrency,)
    if spec is not None and spec.concurrency:
        return spec.concurrency
    return (default_model(trial.load.clients),)


def client_set(subject: Subject, model: Concurrency) -> dict[str, str]:
    """The client's part of a series' ``config_set`` (its identity: two clients, two
    series)."""
    m = subject.manifest
    return {"client": m.name, "library": m.library, "version": m.version,
            "language": m.language, "runtime": subject.runtime or "unknown",
            "concurrency": model.value}


def planned_sets(plan: ClientPlan, trials: list[Trial]
                 ) -> list[tuple[Trial, dict[str, str] | None]]:
    """Each planned work's trial and its client's config_set (None: kvload's trial), as the
    run's rows will name their series (gates are matched against them before any server)."""
    out: list[tuple[Trial, dict[str, str] | None]] = []
    for trial in trials:
        if plan.reference:
            out.append((trial, None))
        out.extend((trial, client_set(s, m)) for s in plan.subjects
                   for m in plan.models[(s.key, trial.index)])
    return out
