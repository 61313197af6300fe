"""redis-benchmark / valkey-benchmark runs for benchmark definitions: the tool on PATH run
with the definition's flags, its ``--csv`` row turned into redisbench-admin's result
document, ``{"Tests": {"Overall": {"rps": …, "avg_latency_ms": …, "p50_latency_ms": …}}}``
(redisbench-admin's ``redis_benchmark_from_stdout_csv_to_json`` with the test named
"Overall"), so a definition's KPI and exporter paths (``$.Tests.Overall.rps``) resolve."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.core.jsontypes import JsonObject
from kvperf.core.proc import probe
from kvperf.driver.base import Measurement
from kvperf.driver.csv_output import parse_csv_rows, pick_row, row_numbers
from kvperf.driver.tool_run import run_tool
from kvperf.server.resp import Endpoint

OVERALL = "Overall"
# Flags of redis-benchmark that take no value (the rest of its flags take one).
_BARE = frozenset({"-q", "--csv", "-l", "-I", "-e", "--enable-tracking", "--cluster",
                   "--tls", "--insecure"})


def version_key(text: str) -> tuple[int, ...]:
    """``7.0.15`` → (7, 0, 15) (pure; non-numeric parts end the key)."""
    parts = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


@dataclass(frozen=True)
class BenchmarkToolRun:
    """One of redis-benchmark / valkey-benchmark, found on PATH, and its version."""

    tool: str
    path: str
    version: str

    @classmethod
    def find(cls, tool: str) -> BenchmarkToolRun:
        path = shutil.which(tool)
        if not path:
            raise DriverError(f"{tool} is not installed (a definition's client needs it)")
        code, text = probe([path, "--version"])
        match = re.search(rf"{re.escape(tool)} v?=?(\d[\w.]*)", text)
        if code != 0 or not match:
            raise DriverError(f"{path} --version did not identify {tool}: {text.strip()[:200]}")
        return cls(tool, path, match.group(1))

    def too_old(self, minimum: str | None) -> str | None:
        """Why the tool found is older than ``min-tool-version``, or None."""
        if minimum and version_key(self.version) < version_key(minimum):
            return f"{self.tool} {self.version} is older than min-tool-version {minimum}"
        return None

    def run(self, argv: tuple[str, ...], endpoint: Endpoint, log: Path,
            cpus: tuple[int, ...] | None, timeout: float, cluster: bool = False
            ) -> JsonObject:
        full = [self.path, "-h", endpoint.host, "-p", str(endpoint.port), "--csv",
                *(["--cluster"] if cluster else []), *argv]
        output = run_tool(full, cpus=cpus, timeout=timeout, log=log)
        if output.returncode != 0:
            lines = (output.stderr or output.stdout).strip().splitlines()
            raise DriverError(f"{self.tool} exited with code {output.returncode}: "
                              f"{lines[-1] if lines else '(no output)'}")
        try:
            numbers = row_numbers(pick_row(parse_csv_rows(output.stdout), None))
        except ValueError as exc:
            raise DriverError(f"{self.tool}: {exc}") from None
        return {"Tests": {OVERALL: numbers}}


def command_mix(argv: tuple[str, ...]) -> dict[str, float]:
    """The command mix a redis-benchmark argv sends (pure): its command (the words after
    the flags), else ``-t``'s tests in equal shares (each runs its -n requests)."""
    words, i = list(argv), 0
    tests: list[str] = []
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "-t" and i + 1 < len(words):
            tests = [t.strip().lower() for t in words[i + 1].split(",") if t.strip()]
        i += 1 if words[i] in _BARE else 2
    if i < len(words):
        return {words[i].lower(): 1.0}
    return {test: 1 / len(tests) for test in tests}


def measurement(document: JsonObject) -> Measurement:
    row = document["Tests"][OVERALL]
    return Measurement(row["rps"], row["avg_latency_ms"], row["min_latency_ms"],
                       row["p50_latency_ms"], row["p95_latency_ms"], row["p99_latency_ms"],
                       row["max_latency_ms"])
