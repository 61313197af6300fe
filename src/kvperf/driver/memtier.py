"""memtier_benchmark runs for benchmark definitions: the real tool when it is on PATH, else
kvload's front end (``kvload memtier``), both through this one driver.

kvperf gives the address and the output file; the definition's options are passed as
planned (definitions/client.py). memtier's JSON layout is read here: ``"ALL STATS"`` →
``Totals`` → ``Ops/sec``, ``Latency``, ``Min Latency``, ``Max Latency`` and
``Percentile Latencies`` (``p50.00`` …), all in milliseconds.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.core.jsontypes import JsonObject
from kvperf.core.proc import probe
from kvperf.driver.base import Measurement
from kvperf.driver.registry import find_tool
from kvperf.server.process import ManagedProcess
from kvperf.server.resp import Endpoint

MEMTIER = "memtier_benchmark"
# Percentiles kvperf asks for when a definition names none (memtier's default is 50,99,99.9;
# 95 fills the row's p95 field).
PERCENTILES = "50,95,99,99.9"


@dataclass(frozen=True)
class MemtierDriver:
    """The program (``[memtier_benchmark]`` or ``[kvload, memtier]``) and its version."""

    program: tuple[str, ...]
    version: str

    @property
    def name(self) -> str:
        return MEMTIER if Path(self.program[0]).name == MEMTIER else "kvload memtier"

    @classmethod
    def find(cls, kvload: Path | None = None) -> MemtierDriver:
        """memtier_benchmark on PATH, else kvload (``kvload``, on PATH or beside kvperf)."""
        real = shutil.which(MEMTIER)
        if real:
            return cls((real,), _version([real, "--version"], r"memtier_benchmark (\S+)"))
        path = find_tool("kvload", kvload, None)
        found = str(path) if path else None
        if not found:
            raise DriverError("neither memtier_benchmark nor kvload is installed: "
                              "scripts/install.sh builds kvload into the environment")
        return cls((found, "memtier"), _version([found, "--version"], r"kvload (\S+)"))

    def argv(self, options: tuple[str, ...], endpoint: Endpoint, json_out: Path,
             cluster: bool = False) -> list[str]:
        extra = [] if any(o.startswith("--print-percentiles") for o in options) else [
            f"--print-percentiles={PERCENTILES}"]
        if cluster:
            extra.append("--cluster-mode")
        return [*self.program, "--server", endpoint.host, "--port", str(endpoint.port),
                *options, *extra, f"--json-out-file={json_out}"]

    def run(self, runs: list[tuple[tuple[str, ...], Path]], endpoint: Endpoint, log: Path,
            cpus: tuple[int, ...] | None, timeout: float, cluster: bool = False
            ) -> list[JsonObject]:
        """Run every (options, JSON file) at once (a definition's ``clientconfigs``) and
        return their JSON documents; DriverError when one fails. Every process started is
        stopped by its pid, also on Ctrl-C."""
        logs = [log.with_name(f"{log.stem}-{i}{log.suffix}") for i in range(len(runs))]
        processes = [ManagedProcess(self.argv(options, endpoint, out, cluster), cpus=cpus,
                                    stdout=path)
                     for (options, out), path in zip(runs, logs, strict=True)]
        try:
            deadline = time.monotonic() + timeout
            for process in processes:
                if not process.wait(max(0.0, deadline - time.monotonic())):
                    raise DriverError(f"{self.name} did not finish within {timeout:.0f}s")
            for process, path in zip(processes, logs, strict=True):
                if process.popen.returncode != 0:
                    raise DriverError(f"{self.name} {process.exit_description()}: "
                                      f"{_last_line(path)}")
        finally:
            for process in processes:
                process.stop(grace=2.0)
        return [read_json(out) for _, out in runs]


def _last_line(log: Path) -> str:
    lines = log.read_text(errors="replace").strip().splitlines() if log.is_file() else []
    return lines[-1] if lines else "(no output)"


def _version(argv: list[str], pattern: str) -> str:
    code, text = probe(argv)
    match = re.search(pattern, text)
    if code != 0 or not match:
        raise DriverError(f"{argv[0]} --version did not identify it: {text.strip()[:200]}")
    return match.group(1)


def read_json(path: Path) -> JsonObject:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DriverError(f"cannot read the memtier JSON {path}: {exc}") from None
    if not isinstance(document, dict):
        raise DriverError(f"{path}: the memtier JSON is not an object")
    return document


def _float(row: JsonObject, key: str) -> float | None:
    value = row.get(key)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def totals(document: JsonObject) -> JsonObject:
    """``"ALL STATS"`` → ``Totals`` (DriverError when the document has none)."""
    found = (document.get("ALL STATS") or {}).get("Totals")
    if not isinstance(found, dict):
        raise DriverError('the memtier JSON has no "ALL STATS" → Totals')
    return found


def measurement(document: JsonObject) -> Measurement:
    """The row's metrics from memtier's Totals (a missing percentile is NaN)."""
    row = totals(document)
    percentiles = row.get("Percentile Latencies") or {}
    rps = _float(row, "Ops/sec")
    if rps is None:
        raise DriverError('the memtier JSON has no "ALL STATS" → Totals → Ops/sec')
    nan = float("nan")

    def pick(value: float | None) -> float:
        return nan if value is None else value

    count = _float(row, "Count")
    return Measurement(
        rps, avg_latency_ms=pick(_float(row, "Latency")),
        min_latency_ms=pick(_float(row, "Min Latency")),
        p50_latency_ms=pick(_float(percentiles, "p50.00")),
        p95_latency_ms=pick(_float(percentiles, "p95.00")),
        p99_latency_ms=pick(_float(percentiles, "p99.00")),
        max_latency_ms=pick(_float(row, "Max Latency")),
        requests=int(count) if count is not None else None)
