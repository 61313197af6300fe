"""What ``--measure`` changes in a run: input checks, how servers start, and counting.

``timing`` (default) measures as always. ``instructions`` runs every server node under
callgrind with instrumentation switched on only for the measure stage, a fixed request count
(``INSTRUCTION_REQUESTS`` per command and one client for the built-in config) and a fixed
key seed, and stores instructions per request plus per-function inclusive costs in the row.
The server's hash seed is fixed and active rehashing is off (server/callgrind.py says why).
``perf-instructions`` counts hardware instructions with ``perf stat`` where the CPU exposes
them. Cluster trials sum the instructions of every node.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from kvperf.config.model import BenchmarkSpec
from kvperf.config.scenarios import Scenario
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.core.proc import run
from kvperf.driver.base import Driver
from kvperf.driver.registry import find_tool
from kvperf.plan.trial import Trial
from kvperf.results import callgraph, folded
from kvperf.results import callgrind as callgrind_format
from kvperf.results.instructions import from_perf, summarize
from kvperf.results.records import InstructionsRecord
from kvperf.results.row import TrialOutcome
from kvperf.server import callgrind, perf_stat

log = logging.getLogger("kvperf")

MEASURES = tuple(Measure)
INSTRUCTION_REQUESTS = 20_000
INSTRUCTION_CLIENTS = 1


def _requests_only(specs: list[BenchmarkSpec], own_config: bool) -> list[BenchmarkSpec]:
    """Counted runs need a fixed request count: default it, or reject durations.

    The built-in config also drops to one client: with 50 connections the order in which
    their keys reach the server (hash-table insert order, read batching, buffer alignment)
    varies from run to run and moves setCommand's cost by ~0.2%; with one it is fixed.
    """
    if not own_config:
        return [replace(s, requests=(INSTRUCTION_REQUESTS,), duration=None,
                        clients=(INSTRUCTION_CLIENTS,)) for s in specs]
    for spec in specs:
        if spec.requests is None:
            raise UsageError(f"config object {spec.index}: instruction counting needs "
                             "'requests' (a fixed request count), not 'duration'")
    return specs


def check_measure(measure: Measure, specs: list[BenchmarkSpec], driver: Driver, *,
                  own_config: bool, client_mode: bool) -> list[BenchmarkSpec]:
    """Validate ``--measure`` against the plan and machine; the specs to run (exit 2 if bad)."""
    if measure not in MEASURES:
        raise UsageError(f"--measure {measure!r}: choose one of {', '.join(MEASURES)}")
    if measure == Measure.TIMING:
        return specs
    if client_mode and measure == Measure.MEMORY:
        raise UsageError("--measure memory fills a server kvperf starts; it cannot be used "
                         "with --mode client/--use-running-server")
    if measure == Measure.MEMORY:
        return specs
    if client_mode:
        raise UsageError(f"--measure {measure} counts the instructions of a server kvperf "
                         "starts; it cannot be used with --mode client/--use-running-server")
    reason = (callgrind.missing_tools() if measure == Measure.INSTRUCTIONS
              else perf_stat.unsupported())
    if reason:
        raise UsageError(f"--measure {measure}: {reason}")
    if not driver.capabilities.seed:
        raise UsageError(f"--measure {measure}: {driver.name} {driver.version} cannot fix its "
                         "random key seed, so two runs would send different keys; use --tool "
                         "kvload (or a valkey-benchmark with --seed)")
    return _requests_only(specs, own_config)


def server_wrapping(measure: Measure, log_dir: Path) -> dict[str, object]:
    """Extra ServerGroup arguments: the valgrind prefix and its slower start and stop."""
    if measure != Measure.INSTRUCTIONS:
        return {}
    fix_seed = callgrind.seed_fixing_works()
    if not fix_seed:
        log.warning("cannot make a private mount namespace (needs root): the server's hash "
                    "seed stays random and instruction counts vary ~0.5% between runs")
    return {"wrap": callgrind.node_wrapper(log_dir, fix_seed),
            "ready_timeout": callgrind.READY_TIMEOUT, "stop_grace": callgrind.STOP_GRACE}


@dataclass
class Counted:
    """What the counting around one measure stage produced."""

    files: list[Path] = field(default_factory=list)
    perf_total: int | None = None


@contextlib.contextmanager
def counting(measure: Measure, pids: list[int], log_dir: Path) -> Iterator[Counted]:
    """Count the server's instructions for the duration of the ``with`` body."""
    counted = Counted()
    if measure == Measure.INSTRUCTIONS and pids:
        callgrind.start_counting(pids)
        yield counted
        counted.files = callgrind.stop_counting(pids, log_dir)
    elif measure == Measure.PERF_INSTRUCTIONS and pids:
        counter = perf_stat.PerfCounter(pids, log_dir)
        try:
            yield counted
        finally:
            counted.perf_total = counter.stop()
    else:
        yield counted


def counted_scenario(s: Scenario) -> Scenario:
    """A module scenario under instruction counting: a fixed request count, no warmup — a
    timed one sends ``requests`` (default INSTRUCTION_REQUESTS) instead of ``duration``; an
    ingestion keeps its dataset rows."""
    if s.duration is None:
        return replace(s, warmup=0)
    return replace(s, duration=None, warmup=0, requests=s.requests or INSTRUCTION_REQUESTS)


def instruction_result(counted: Counted, trial: Trial, outcome: TrialOutcome,
                       out_dir: Path) -> InstructionsRecord | None:
    """The row's ``instructions`` object (None in timing mode)."""
    return counted_result(counted, trial.load.command.argv[0], trial.describe(), outcome,
                          out_dir)


def counted_result(counted: Counted, command: str, title: str, outcome: TrialOutcome,
                   out_dir: Path) -> InstructionsRecord | None:
    """The ``instructions`` object of any kind of work: ``command`` names the command whose
    implementation function is looked up, ``title`` heads the flamegraph."""
    requests = outcome.measurement.requests if outcome.measurement else None
    if counted.perf_total is not None:
        return from_perf(counted.perf_total, requests)
    if not counted.files:
        return None
    profiles = []
    for path in counted.files:
        try:
            profiles.append(callgrind_format.parse(path.read_text(errors="replace")))
        except (OSError, callgrind_format.CallgrindFormatError) as exc:
            outcome.error = outcome.error or f"cannot read callgrind profile {path}: {exc}"
            return None
    files = [str(p.relative_to(out_dir)) for p in counted.files]
    merged = callgrind_format.merge(profiles)
    result = summarize(merged, requests, command, files)
    graph = _flamegraph(merged, counted.files[0].parent, title)
    if graph is not None:
        result["flamegraph"] = str(graph.relative_to(out_dir))
    return result


def _flamegraph(profile: callgrind_format.Profile, directory: Path, title: str) -> Path | None:
    """callgrind's call graph as folded stacks and an SVG (instructions; deterministic).

    None (with a warning) when kvflame is missing or fails: the counts stand without it.
    """
    kvflame = find_tool("kvflame", None, None)
    if kvflame is None:
        log.warning("kvflame is not installed: no instruction flamegraph")
        return None
    folded_path, svg = directory / "callgrind.folded", directory / "callgrind.svg"
    folded_path.write_text(folded.render(callgraph.fold(profile)))
    done = run([str(kvflame), "svg", str(folded_path), str(svg),
                f"{title} · instructions", "instructions"], name="kvflame svg")
    if done.returncode != 0:
        log.warning("instruction flamegraph failed: %s", done.stderr.strip()[-300:])
        return None
    return svg
