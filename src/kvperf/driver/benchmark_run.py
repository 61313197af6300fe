"""redis-benchmark / valkey-benchmark runs for benchmark definitions: the tool on PATH run
with the definition's flags, its ``--csv`` rows turned into redisbench-admin's result
document (``redis_benchmark_from_stdout_csv_to_json``), so a definition's KPI and exporter
paths resolve. One row (a command, one ``-t`` test) is the test named "Overall", as
redis-benchmarks-specification names it: ``{"Tests": {"Overall": {"rps": …, …}}}``
(``$.Tests.Overall.rps``). Several rows (the default suite when there is no ``-t`` and no
command, or ``-t a,b``) are keyed by the tool's test names, as redisbench-admin keys a
multi-test run: ``{"Tests": {"SET": {…}, "LRANGE_100 (first 100 elements)": {…}, …}}``
(``$.Tests.*.rps``, ``$.Tests.SET.rps``)."""

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
            return result_document(parse_csv_rows(output.stdout))
        except ValueError as exc:
            raise DriverError(f"{self.tool}: {exc}") from None


def result_document(rows: list[dict[str, str]]) -> JsonObject:
    """The CSV's rows as redisbench-admin's result document (pure; module docstring): one
    row → ``Tests.Overall``, several → one entry per test name. ValueError: no row, a row
    that measured nothing, or a test name twice (one would hide the other)."""
    if len(rows) == 1:
        return {"Tests": {OVERALL: row_numbers(rows[0])}}
    if not rows:
        pick_row(rows, None)  # raises, naming what was found
    tests: JsonObject = {}
    for row in rows:
        if row["test"] in tests:
            raise ValueError(f"test {row['test']!r} appears twice in the CSV")
        tests[row["test"]] = row_numbers(row)
    return {"Tests": tests}


def test_command(test: str) -> str:
    """The command a redis-benchmark test sends (pure): ``PING_INLINE`` → ping,
    ``LRANGE_100 (first 100 elements)`` → lrange, ``MSET (10 keys)`` → mset."""
    return test.split()[0].split("_")[0].lower()


def suite_mix(document: JsonObject) -> dict[str, float] | None:
    """The command mix of a multi-test run (pure): each test ran -n requests, so each has
    an equal share of the calls, under its command (two PING tests: ping 2/N). None for a
    single-test document (its argv says its command: ``command_mix``)."""
    tests = document["Tests"]
    if OVERALL in tests:
        return None
    mix: dict[str, float] = {}
    for test in tests:
        mix[test_command(test)] = mix.get(test_command(test), 0.0) + 1 / len(tests)
    return mix


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
    """The row's numbers: the Overall test's, else the whole suite's (``suite_measurement``)."""
    tests = document["Tests"]
    if OVERALL not in tests:
        return suite_measurement(list(tests.values()))
    row = tests[OVERALL]
    return Measurement(row["rps"], row["avg_latency_ms"], row["min_latency_ms"],
                       row["p50_latency_ms"], row["p95_latency_ms"], row["p99_latency_ms"],
                       row["max_latency_ms"])


def suite_measurement(tests: list[JsonObject]) -> Measurement:
    """A suite's tests, run one after another with -n requests each, as one load (pure):
    ops/s = all requests / all the tests' time = N / Σ 1/rps_i (their harmonic mean), the
    mean latency the tests' mean (equal requests), min the least, max the most; the suite's
    p50/p95/p99 cannot be had from the tests' percentiles, so each is the slowest test's,
    an upper bound (every test has that share of its requests at or below its own)."""
    def worst(name: str) -> float:
        return max(float(t[name]) for t in tests)
    return Measurement(len(tests) / sum(1 / float(t["rps"]) for t in tests),
                       sum(float(t["avg_latency_ms"]) for t in tests) / len(tests),
                       min(float(t["min_latency_ms"]) for t in tests),
                       worst("p50_latency_ms"), worst("p95_latency_ms"),
                       worst("p99_latency_ms"), worst("max_latency_ms"))
