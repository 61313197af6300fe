"""A client library's trial as a unit of work (``ClientWork``; ``ClientMatrix``: the config
matrix × clients × concurrency models as a batch), docs/CLIENTS.md.

Per trial: a fresh server (or the running one in client mode), the key space preloaded when
the workload reads, CONFIG RESETSTAT, the harness run in its own process group (the spec in
a file, a deadline, killed by pid on failure or interruption), its JSON checked against the
schema and the spec, INFO commandstats against warmup + measured ops per command within 1%,
INFO stats' calls per read against the pipeline it was asked for (clients/wire.py), and the
row: the client in the trial's identity, rps and latency (closed loop: uncorrected) from its
merged histograms, client CPU per operation in its measured window (the harness's own
reading) beside its process total (wait4 of its process tree, the untimed allocation pass
in it), peak RSS, bytes allocated per operation (the harness's allocation pass after its
measured window), the server's CPU per operation and calls per read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from kvperf.clients import result as results
from kvperf.clients import wire as wires
from kvperf.clients.manifest import Manifest, Subject
from kvperf.clients.profiling import runtime_env
from kvperf.clients.workload import KEY_PREFIX, deadline, seeded_keys, workload
from kvperf.core import proc
from kvperf.core.cpus import format_cpu_list
from kvperf.core.errors import DriverError
from kvperf.core.identity import stable_id
from kvperf.core.kinds import Concurrency
from kvperf.driver.base import Measurement, Target
from kvperf.driver.seed import Command
from kvperf.pipeline.run.client_plan import client_set
from kvperf.pipeline.run.model import Bench, Prepared
from kvperf.pipeline.run.prepare import client_endpoint, client_mode
from kvperf.pipeline.run.profiling import Profiled, harness_argv, profile_result, profiling
from kvperf.pipeline.run.rate_sweep import SweepBatch, sweep_of
from kvperf.pipeline.run.trial_run import Matrix, MatrixTrial
from kvperf.plan.sweep import CONFIG_SET_KEY, ladder, point_trial
from kvperf.plan.trial import Trial
from kvperf.results.records import ClientRecord, HarnessRecord, WireRecord
from kvperf.results.row import (
    Details,
    Row,
    ServerSide,
    TrialOutcome,
    build_row,
    trial_series,
)
from kvperf.server.process import pinned_argv
from kvperf.server.resp import Endpoint
from kvperf.server.stats import Collected
from kvperf.store.files import write_json_atomic

PASSWORD_ENV = "KVPERF_CLIENT_PASSWORD"
STDERR_TAIL = 5


@dataclass
class ClientMatrix(Matrix):
    """The prepared config matrix run by each client (and kvload when asked: ``reference``)
    under each concurrency model of its spec, trial after trial."""

    subjects: tuple[Subject, ...] = ()
    models: dict[tuple[str, int], tuple[Concurrency, ...]] = field(default_factory=dict)
    reference: bool = False

    def works(self) -> list[ClientWork | MatrixTrial]:  # type: ignore[override]
        out: list[ClientWork | MatrixTrial] = []
        for trial in self.prepared.trials:
            if self.reference:  # kvload's sweep, when its series is swept
                out.extend(SweepBatch(self.prepared).expand(trial))
            for s in self.subjects:
                for m in self.models[(s.key, trial.index)]:
                    out.extend(self._client_works(trial, s, m))
        return out

    def _client_works(self, trial: Trial, subject: Subject, model: Concurrency
                      ) -> list[ClientWork]:
        """A client's trial (closed loop) and, when its series is swept (the config's
        ``rate_sweep`` or --rate-sweep with fixed ``rates``), one open-loop trial per rate:
        the harness paces its sends at that rate (the spec's ``rate``) and times each
        command from its intended send time."""
        sweep = sweep_of(self.prepared, trial)
        points = [] if sweep is None else [
            ClientWork(self.prepared, point_trial(trial, step, float(step.rate or 0), sweep),
                       subject, model, rate=step.label) for step in ladder(sweep)]
        return [ClientWork(self.prepared, trial, subject, model), *points]


@dataclass
class ClientWork:
    """One config trial run by one client harness under one concurrency model."""

    prepared: Prepared
    trial: Trial
    subject: Subject
    model: Concurrency
    record: HarnessRecord | None = None
    rate: str | None = None  # an open-loop point's step ("2000/s"): a series of its own

    @property
    def manifest(self) -> Manifest:
        return self.subject.manifest

    @property
    def side(self) -> bool:
        """compare --client: the client is the side (the identity and series hold the
        trial alone, so the sides' rows pair)."""
        return self.prepared.options.client_side

    @property
    def series_set(self) -> dict[str, str]:
        """What the client adds to the series' config_set: everything about it in a run;
        as a compare side, only a model the side's name does not fix (``NAME:MODEL`` makes
        the model the side's: ``redis-py:single`` and ``redis-py:pool`` pair)."""
        rate = {CONFIG_SET_KEY: self.rate} if self.rate else {}
        if not self.side:
            return {**client_set(self.subject, self.model), **rate}
        return rate if self.subject.model is not None else {
            "concurrency": self.model.value, **rate}

    @property
    def identity(self) -> str:
        return stable_id({**self.trial.params(), "client": self.series_set, "harness": True})

    @property
    def name(self) -> str:
        return f"trial {self.trial.index} {self.manifest.name} {self.model}"

    def describe(self) -> str:
        return f"{self.manifest.name} ({self.model}) {self.trial.describe()}"

    @property
    def log_dir(self) -> Path:
        return (self.prepared.out_dir / "trials" / f"{self.trial.index:04d}-{self.identity}"
                f"-{self.manifest.name}-{self.model}-r{self.trial.run}")

    @property
    def shared_server(self) -> None:
        return None

    def execute(self, bench: Bench) -> None:
        trial, options = self.trial, self.prepared.options
        client = format_cpu_list(trial.load.cpus) if trial.load.cpus else None
        if client_mode(options):
            endpoint = client_endpoint(options)
            bench.outcome.pinning = {"server": None, "client": client}
            self._run(bench, Target((endpoint,), False, options.tls_ca), [])
            return
        assert self.prepared.binary is not None
        tls = bench.tls_files() if trial.server.tls else None
        with bench.servers(self.prepared.binary, trial.server, tls, client) as group:
            self._run(bench, Target(tuple(group.endpoints), False, tls.ca if tls else None),
                      group.pids)

    def _run(self, bench: Bench, target: Target, pids: list[int]) -> None:
        endpoint = target.first
        spec = workload(self.trial, self.model, endpoint,
                        str(target.tls_ca) if target.tls_ca else None)
        if seeded_keys(spec):
            with bench.stage("seed"), bench.probe.keyspace(target) as keyspace:
                bench.outcome.checks["seed_commands"] = keyspace.send_all(
                    _preload(self.trial.load.keyspacelen, self.trial.load.data_size))
        bench.meet("warmup")
        bench.meet("measure")
        bench.probe.reset_stats(target.endpoints)
        cpu_before = bench.probe.cpu_seconds(pids)
        settings = self.trial.profile or self.prepared.options.profile
        with profiling(settings, pids, self.log_dir) as profiled, bench.stage("measure"):
            if settings is not None:
                profiled.client = self.log_dir / "perf-client.data"
            measured = self._harness(spec, endpoint, profiled)
        bench.outcome.profile = profile_result(profiled, self.describe(),
                                               self.prepared.out_dir)
        found = self._result(spec)
        collected = bench.probe.collect(target.endpoints)
        table, problem = results.accounting(found, collected.get("commandstats", {}))
        wire, unbatched = _wire(spec, collected)
        bench.outcome.measurement = _measurement(found, self.log_dir)
        bench.outcome.histogram_file = str(
            (self.log_dir / "histograms.json").relative_to(self.prepared.out_dir))
        calls = sum(v["server"] for v in table.values())
        bench.outcome.server = _server_side(collected.get("keyspace_hits"), calls,
                                            cpu_before, bench.probe.cpu_seconds(pids))
        self.record = _record(self, found, measured, table, wire)
        if problem:
            raise DriverError(problem)
        if unbatched:
            raise DriverError(f"client {self.manifest.name}: {unbatched}")

    def _harness(self, spec: dict[str, object], endpoint: Endpoint,
                 profiled: Profiled) -> proc.Measured:
        spec_path = self.log_dir / "workload.json"
        write_json_atomic(spec_path, spec)
        scratch = self.log_dir / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        env = self.manifest.environment()
        env.pop(PASSWORD_ENV, None)
        if endpoint.password is not None:
            env[PASSWORD_ENV] = endpoint.password.reveal()
        argv = [*self.manifest.expand(self.manifest.run), str(spec_path)]
        if profiled.settings is not None and profiled.client is not None:
            argv = harness_argv(argv, profiled.client, profiled.settings)
            env = runtime_env(self.manifest.language, env)
        argv = pinned_argv(argv, self.trial.load.cpus)  # the client's CPUs, as kvload runs
        limit = deadline(spec)
        measured = proc.run_measured(argv, stdout=self.log_dir / "harness.out",
                                     stderr=self.log_dir / "harness.err", cwd=scratch,
                                     env=env, deadline=limit)
        if measured.timed_out:
            raise DriverError(f"client {self.manifest.name} did not finish within its "
                              f"deadline of {limit:.0f} s (warmup + measured time + grace): "
                              "its process group was killed")
        if measured.returncode != 0:
            raise DriverError(f"client {self.manifest.name} failed (exit "
                              f"{measured.returncode}): {self._stderr_tail()}")
        return measured

    def _stderr_tail(self) -> str:
        text = proc.file_tail(self.log_dir / "harness.err", STDERR_TAIL).strip()
        return text.splitlines()[-1] if text else "no message on stderr"

    def _result(self, spec: dict[str, object]) -> results.HarnessResult:
        stdout = (self.log_dir / "harness.out").read_text(errors="replace")
        try:
            return results.parse(stdout, spec)
        except results.ResultError as exc:
            raise DriverError(f"client {self.manifest.name}: {exc}") from None

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        series = trial_series(self.trial)
        series["config_set"] = {**(series["config_set"] or {}), **self.series_set} or None
        series["trial_id"] = self.identity
        record = self.record or _identity_record(self)
        context = replace(self.prepared.context, tool=self.manifest.name,
                          tool_version=record.get("version", self.manifest.version))
        if self.side:  # history tells the sides apart by the client, not the server
            context = replace(context, revision=self.subject.label(self.model))
        source = self.manifest.source
        if source is not None:  # the library at a commit (--client NAME@REF)
            context = replace(context, env={**context.env, "client_source": {
                "repo": source.repo, "ref": source.ref, "commit": source.sha}})
        client = ClientRecord(errors=record.get("errors", 0),
                              client_cpu_us_per_request=record.get("cpu_us_per_op"))
        return build_row(series, context, outcome, timestamp,
                         Details(client=client, harness=record))


def _preload(count: int, size: int) -> Iterator[Command]:
    value = b"x" * size
    for i in range(count):
        yield ("SET", f"{KEY_PREFIX}{i}", value)


def _measurement(found: results.HarnessResult, log_dir: Path) -> Measurement:
    latency = found.latency_ms()
    merged = found.histogram()
    if found.open_loop:  # from each batch's intended send time: corrected
        write_json_atomic(log_dir / "histograms.json",
                          {"corrected": merged, "unit": "us",
                           "latency": "application, from the intended send time (open loop "
                                      f"at {found.document['rate']['rps']:g} rps): corrected "
                                      "for coordinated omission"})
    else:  # closed loop: never "corrected"
        write_json_atomic(log_dir / "histograms.json",
                          {"service": merged, "unit": "us",
                           "latency": "application (call to result, closed loop): "
                                      "uncorrected for coordinated omission"})
    return Measurement(rps=found.ops / found.duration_s, avg_latency_ms=latency["mean"],
                       min_latency_ms=latency["min"], p50_latency_ms=latency["p50"],
                       p95_latency_ms=latency["p95"], p99_latency_ms=latency["p99"],
                       max_latency_ms=latency["max"], requests=found.ops)


def _server_side(hits: int | None, calls: int, before: float | None,
                 after: float | None) -> ServerSide:
    server = ServerSide(calls=calls, keyspace_hits=hits)
    if before is not None and after is not None:
        server["cpu_seconds"] = round(after - before, 3)
        if calls:
            server["cpu_us_per_request"] = round((after - before) / calls * 1e6, 4)
    return server


def _wire(spec: dict[str, object], collected: Collected
          ) -> tuple[WireRecord | None, str | None]:
    """Calls per read over the harness's run and, for a pipeline the server did not see,
    why the trial fails (None, None: the server did not report its counters)."""
    calls, reads = collected.get("commands_processed"), collected.get("reads_processed")
    if calls is None or reads is None:
        return None, None
    commands = spec["commands"]
    assert isinstance(commands, list)
    return wires.judge(calls, reads, int(str(spec["pipeline"])), spec["transaction"] is True,
                       [str(c["command"]) for c in commands], int(str(spec["value_size"])))


def _identity_record(work: ClientWork) -> HarnessRecord:
    m = work.manifest
    return HarnessRecord(name=m.name, library=m.library, version=m.version,
                         language=m.language, runtime=work.subject.runtime or "unknown",
                         model=work.model.value, workers=work.trial.load.clients)


def _record(work: ClientWork, found: results.HarnessResult, measured: proc.Measured,
            table: dict[str, dict[str, int]], wire: WireRecord | None) -> HarnessRecord:
    client = found.client
    all_ops = found.ops + sum(found.warmup.get(c, 0) + found.allocation_pass.get(c, 0)
                              for c in found.commands)
    cpu = measured.user_s + measured.system_s  # wait4: the process tree, start to exit
    window = found.cpu  # the harness's own reading around its measured window
    in_window = float(window["user_s"]) + float(window["system_s"]) if window else None
    record = _identity_record(work)
    record.update(HarnessRecord(
        library=client["library"], version=client["version"], runtime=client["runtime"],
        ops=found.ops, errors=found.errors,
        first_error=found.document["first_error"], warmup=found.warmup,
        duration_s=found.duration_s, cpu_user_s=round(measured.user_s, 3),
        cpu_system_s=round(measured.system_s, 3),
        cpu_us_per_op=(round(in_window / found.calls * 1e6, 3)
                       if in_window is not None and found.calls else None),
        cpu_window=window,
        process_cpu_us_per_op=round(cpu / all_ops * 1e6, 3) if all_ops else None,
        max_rss_kib=measured.max_rss_kib, allocations=found.allocations(),
        p99_9_latency_ms=round(found.latency_ms()["p99_9"], 3),
        commands={n: {k: round(v, 3) for k, v in s.items()}
                  for n, s in found.per_command_ms().items()},
        accounting=table, wire=wire, rate=found.document.get("rate")))
    return record
