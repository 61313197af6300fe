"""Adapter for valkey-benchmark and redis-benchmark (same flags, same CSV).

What the tool can do is read from its own ``--help`` at the version found, so an option it lacks
(``--duration``, ``--rps`` …) is rejected before any server starts instead of being ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kvperf.config.commands import DATA
from kvperf.core import proc
from kvperf.core.errors import DriverError
from kvperf.driver.base import Capabilities, Measurement, Target
from kvperf.driver.csv_output import parse_csv_rows, pick_row, row_numbers
from kvperf.driver.flags import load_flags
from kvperf.driver.tool_run import run_for, run_tool
from kvperf.plan.trial import Load

KEY_SEED = 1
FOREVER = 2_000_000_000  # -n for a warmup run that kvperf stops itself


def capabilities_from_help(help_text: str) -> Capabilities:
    """Derive capabilities from a tool's --help text."""
    def has(flag: str) -> bool:
        return re.search(rf"(^|\s){re.escape(flag)}\b", help_text, re.M) is not None

    return Capabilities(duration=has("--duration"), warmup=has("--warmup"), rps=has("--rps"),
                        sequential=has("--sequential"), threads=has("--threads"),
                        tls=has("--tls"), cluster=has("--cluster"), seed=has("--seed"))


def parse_tool_version(text: str) -> str:
    """'8.0.1' from 'valkey-benchmark 8.0.1' (or 'unknown')."""
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else "unknown"


def expand_data(argv: tuple[str, ...], size: int) -> list[str]:
    """Replace kvperf's __data__ placeholder with a value of ``size`` bytes (tools lack it)."""
    value = "x" * size
    return [arg.replace(DATA, value) for arg in argv]


@dataclass
class BenchmarkTool:
    """valkey-benchmark or redis-benchmark at ``path``."""

    name: str
    path: Path
    version: str
    capabilities: Capabilities
    timeout_floor: float = 120.0

    @classmethod
    def probe(cls, name: str, path: Path) -> BenchmarkTool:
        code, version_text = proc.probe([str(path), "--version"])
        if code != 0:
            raise DriverError(f"{path} --version failed: {version_text.strip()[:200]}")
        _, help_text = proc.probe([str(path), "--help"])
        return cls(name, path, parse_tool_version(version_text), capabilities_from_help(help_text))

    def unsupported(self, load: Load, cluster: bool, tls: bool) -> str | None:
        caps, tool = self.capabilities, f"{self.name} {self.version}"
        checks = [
            (load.duration is not None and not caps.duration, "'duration'",
             "use 'requests' in the config, or --tool kvload"),
            (load.threads is not None and not caps.threads, "'benchmark-threads'",
             "remove it, or --tool kvload"),
            (tls and not caps.tls, "'tls_mode'", "use a TLS-enabled build of the tool"),
            (load.command.is_sequence and not caps.sequences,
             f"the command sequence {load.command.name!r} (mixes and MULTI/EXEC send several "
             "commands per request)", "use --tool kvload"),
            (cluster and not caps.cluster, "'cluster_mode'", "use --tool kvload"),
            (load.read_from_replicas != "no", "'read_from_replicas'", "use --tool kvload"),
            (load.staircase is not None, "'staircase'", "use --tool kvload"),
            (bool(load.workload()), "'" + "', '".join(load.workload()) + "'",
             "use --tool kvload"),
            (cluster and load.command.seed.value != "none" and not caps.cluster_plain_keys,
             f"cluster_mode with {load.command.name} (it reads seeded keys, but in cluster "
             "mode this tool puts a random {tag} in every key, so it would read keys that "
             "do not exist)", "use --tool kvload, which routes plain keys"),
        ]
        for failed, what, instead in checks:
            if failed:
                return f"{what} is not supported by {tool} ({self.path}); {instead}"
        return None

    def argv(self, load: Load, target: Target, requests: int) -> list[str]:
        """The tool's argv for one run (pure apart from reading self)."""
        argv = [str(self.path), *load_flags(load, target, ["-n", str(requests)]), "--csv"]
        if self.capabilities.seed:
            argv += ["--seed", str(KEY_SEED)]  # the same keys in every run, as kvload
        if load.command.is_custom:
            return argv + expand_data(load.command.argv, load.data_size)
        assert load.command.test is not None
        return [*argv, "-t", load.command.test]

    def _timeout(self, load: Load) -> float:
        requests = load.requests or 0
        return max(self.timeout_floor, requests / 5_000)

    def warmup(self, load: Load, target: Target, seconds: int, log: Path) -> None:
        run_for(self.argv(load, target, FOREVER), cpus=load.cpus, seconds=seconds, log=log)

    def measure(self, load: Load, target: Target, log: Path) -> Measurement:
        if load.requests is None:
            raise DriverError(f"{self.name} {self.version} cannot run a duration-bounded load")
        output = run_tool(self.argv(load, target, load.requests), cpus=load.cpus,
                          timeout=self._timeout(load), log=log)
        problem = _error_line(output.stdout + output.stderr)
        if output.returncode != 0 or problem:
            detail = problem or _tail(output.stderr or output.stdout)
            raise DriverError(f"{self.name} exited with code {output.returncode}: {detail}")
        try:
            title = None if load.command.is_custom else load.command.name
            numbers = row_numbers(pick_row(parse_csv_rows(output.stdout), title))
        except ValueError as exc:
            raise DriverError(f"{self.name} output: {exc}") from None
        return Measurement(
            rps=numbers["rps"], avg_latency_ms=numbers["avg_latency_ms"],
            min_latency_ms=numbers["min_latency_ms"], p50_latency_ms=numbers["p50_latency_ms"],
            p95_latency_ms=numbers["p95_latency_ms"], p99_latency_ms=numbers["p99_latency_ms"],
            max_latency_ms=numbers["max_latency_ms"], requests=load.requests,
            extra={"client_cpu_us_per_request":
                   round(output.cpu_seconds / load.requests * 1e6, 4)})


def _error_line(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(("Error", "ERR", "Could not connect", "Server closed")):
            return line.strip()
    return None


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:]) if lines else "(no output)"
