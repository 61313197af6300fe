"""One trial's stages against a target: seed → warmup → top-up → measure → checks.

Everything a trial proves about itself (hit ratio, pops really popped, the server executed
what the tool counted) is checked here; a failed check fails the trial with the reason.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.config.commands import Seed
from kvperf.core.errors import DriverError
from kvperf.driver.base import Driver, Target
from kvperf.driver.seed import KeyStore, ensure_pop_supply, seed_keyspace
from kvperf.pipeline import executed
from kvperf.pipeline.executed import Executed
from kvperf.pipeline.instructions import counting, instruction_result
from kvperf.pipeline.model import Observer, Prepared, Probe
from kvperf.pipeline.profiling import profile_result, profiling
from kvperf.plan.trial import Trial
from kvperf.results.row import ServerSide, TrialOutcome
from kvperf.store.files import write_json_atomic

MIN_HIT_RATIO = 0.9
MIN_EXECUTED_RATIO = 0.98


@contextlib.contextmanager
def _stage(outcome: TrialOutcome, name: str, observer: Observer, trial: Trial) -> Iterator[None]:
    observer.stage(trial, name)
    started = time.monotonic()
    try:
        yield
    finally:
        outcome.stage_seconds[name] = time.monotonic() - started


def _pop_target(trial: Trial) -> int:
    """Elements a pop command needs for the whole measure stage (plus the tool's overshoot)."""
    load = trial.load
    margin = load.clients * load.pipeline + 1000
    if load.requests is not None:
        return load.requests + margin
    per_second = min(200_000 * load.pipeline, 2_000_000)
    return per_second * (load.duration or 1) + margin


@dataclass
class TrialRun:
    """Runs one trial's stages against a target; collects the outcome."""

    prepared: Prepared
    trial: Trial
    observer: Observer
    log_dir: Path
    probe: Probe
    outcome: TrialOutcome = field(default_factory=TrialOutcome)
    # Called before the warmup and before the measure stage (duet rounds meet there).
    sync: Callable[[str], None] | None = None
    # Per command of the load: calls, usec_per_call and the calls the tool's count implies.
    _commands: dict[str, Executed] = field(default_factory=dict, init=False)

    @property
    def driver(self) -> Driver:
        return self.prepared.driver

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return _stage(self.outcome, name, self.observer, self.trial)

    def run(self, target: Target, pids: list[int]) -> None:
        load = self.trial.load
        tool_log = self.log_dir / "tool.log"
        with self.probe.keyspace(target) as keyspace:
            self._seed(keyspace)
            self._meet("warmup")
            if load.warmup:
                with self.stage("warmup"):
                    self.driver.warmup(load, target, load.warmup, tool_log)
            before = self._top_up(keyspace)
            self._meet("measure")
            self.outcome.checks["measure_started_at"] = round(time.time(), 3)
            self.probe.reset_stats(target.endpoints)
            cpu_before = self.probe.cpu_seconds(pids)
            measure = self.prepared.options.measure
            with (counting(measure, pids, self.log_dir) as counted,
                  profiling(self.trial.profile or self.prepared.options.profile, pids,
                            self.log_dir) as profiled,
                  self.stage("measure")):
                self.outcome.measurement = self.driver.measure(load, target, tool_log)
            self._keep_histograms()
            self._server_side(target, pids, cpu_before)
            self.outcome.instructions = instruction_result(counted, self.trial, self.outcome,
                                                           self.prepared.out_dir)
            self.outcome.profile = profile_result(profiled, self.trial.describe(),
                                                  self.prepared.out_dir)
            self._check(keyspace, before)

    def _meet(self, stage: str) -> None:
        if self.sync is not None:
            self.sync(stage)

    def _keep_histograms(self) -> None:
        """Store the tool's HDR histograms beside the trial; the row names the file."""
        measurement = self.outcome.measurement
        histograms = measurement.extra.get("histograms") if measurement else None
        if histograms:
            path = self.log_dir / "histograms.json"
            write_json_atomic(path, histograms)
            self.outcome.histogram_file = str(path.relative_to(self.prepared.out_dir))

    def _seed(self, keyspace: KeyStore) -> None:
        load = self.trial.load
        seed = load.command.seed
        if seed is Seed.NONE or load.command.pops:
            return
        with self.stage("seed"):
            sent = seed_keyspace(keyspace, seed, load.keyspacelen, load.data_size)
        self.outcome.checks["seed_commands"] = sent

    def _top_up(self, keyspace: KeyStore) -> int | None:
        load = self.trial.load
        if not load.command.pops:
            return None
        with self.stage("seed"):
            return ensure_pop_supply(keyspace, load.command.seed, _pop_target(self.trial),
                                     load.data_size)

    def _server_side(self, target: Target, pids: list[int], cpu_before: float | None) -> None:
        measurement = self.outcome.measurement
        collected = self.probe.collect(target.endpoints)
        requests = measurement.requests if measurement else None
        commands = executed.per_command(self.trial.load.command,
                                        collected.get("commandstats", {}), requests)
        calls, usec_per_call = executed.totals(commands)
        server = ServerSide(calls=calls if collected else None, usec_per_call=usec_per_call,
                            keyspace_hits=collected.get("keyspace_hits"),
                            keyspace_misses=collected.get("keyspace_misses"),
                            monotonic_clock=collected.get("monotonic_clock"))
        if self.trial.load.command.is_sequence and collected:
            server["commands"] = dict(commands)
        if len(collected.get("node_calls", [])) > 1:
            server["calls_per_node"] = [executed.node_total(self.trial.load.command, node)
                                        for node in collected["node_calls"]]
        cpu_after = self.probe.cpu_seconds(pids)
        if cpu_before is not None and cpu_after is not None and measurement:
            cpu = cpu_after - cpu_before
            server["cpu_seconds"] = round(cpu, 3)
            if requests or calls:
                server["cpu_us_per_request"] = round(cpu / (requests or calls) * 1e6, 4)
        self.outcome.server = server
        self._commands = commands if collected else {}

    def _check(self, keyspace: KeyStore, before: int | None) -> None:
        self._check_executed()
        load = self.trial.load
        if before is not None:
            left = keyspace.count(load.command.seed)
            self.outcome.checks.update({"pop_supply": before, "popped": before - left,
                                        "left": left})
            if left == 0:
                raise DriverError(f"{load.command.name} emptied its key during the measure "
                                  "stage: pops of an empty key were measured")
        hits = self.outcome.server.get("keyspace_hits") or 0
        misses = self.outcome.server.get("keyspace_misses") or 0
        if load.command.seed is not Seed.NONE and not load.command.pops and hits + misses:
            ratio = hits / (hits + misses)
            self.outcome.checks["hit_ratio"] = round(ratio, 4)
            if ratio < MIN_HIT_RATIO:
                raise DriverError(f"only {ratio:.0%} of {load.command.name} reads found "
                                  "their key: the measurement would be of misses")


    def _check_executed(self) -> None:
        """The server must have executed (nearly) every request the tool counted, per
        command of the load (a mix's GETs and SETs each)."""
        ratio = executed.executed_ratio(self._commands)
        if ratio is None:
            return
        self.outcome.checks["executed_ratio"] = ratio
        problem = executed.shortfall(self._commands, MIN_EXECUTED_RATIO)
        if problem:
            raise DriverError(problem)
