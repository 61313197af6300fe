"""kvload for a module scenario: a command line whose ``__field:NAME__`` placeholders kvload
fills from a CSV dataset (``--dataset``), bounded by rows, requests or seconds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.driver.base import Measurement, Target
from kvperf.driver.kvload import measurement_from, read_report
from kvperf.driver.tool_run import run_tool

GRACE = 120.0  # seconds a scenario's kvload may take beyond its own bound


@dataclass(frozen=True)
class ScenarioLoad:
    """What kvload sends for one scenario (validated by config/scenarios.py)."""

    command: str  # one line; kvload splits it into words (double quotes group)
    clients: int
    pipeline: int
    requests: int | None  # -n (rows of an ingestion, or the scenario's requests)
    duration: int | None
    warmup: int
    sequential: bool
    dataset: Path | None
    keyspacelen: int | None
    seed: int
    cpus: tuple[int, ...] | None


def scenario_argv(kvload: Path, load: ScenarioLoad, target: Target, report: Path) -> list[str]:
    """kvload's argv (pure)."""
    first = target.first
    argv = [str(kvload), "-h", first.host, "-p", str(first.port), "-c", str(load.clients),
            "-P", str(load.pipeline), "--seed", str(load.seed), "-q", "--json", str(report)]
    if load.duration is not None:
        argv += ["--duration", str(load.duration)]
    else:
        argv += ["-n", str(load.requests)]
    if load.warmup:
        argv += ["--warmup", str(load.warmup)]
    if load.sequential:
        argv.append("--sequential")
    if load.dataset is not None:
        argv += ["--dataset", str(load.dataset)]
    if load.keyspacelen is not None:
        argv += ["-r", str(load.keyspacelen)]
    if target.tls_ca:
        argv += ["--tls", "--cacert", str(target.tls_ca)]
    return [*argv, load.command]


def run_scenario(kvload: Path, load: ScenarioLoad, target: Target, log: Path) -> Measurement:
    """Run kvload once; its JSON's test → the measurement (DriverError on failure)."""
    report = log.with_name("kvload.json")
    timeout = GRACE + load.warmup + (load.duration or 0) + (load.requests or 0) / 2_000
    output = run_tool(scenario_argv(kvload, load, target, report), cpus=load.cpus,
                      timeout=timeout, log=log)
    if output.returncode != 0:
        lines = (output.stderr or output.stdout).strip().splitlines()
        raise DriverError(f"kvload exited with code {output.returncode}: "
                          f"{lines[-1] if lines else '(no output)'}")
    return measurement_from(read_report(report)["tests"][0])
