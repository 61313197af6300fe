"""kvload's trace commands for kvperf (issue 27, docs/TRACES.md): a trace checked and
summarised (``kvload trace-info``: a bad trace is bad input, exit 2, with kvload's message
naming the byte offset) and replayed (``kvload replay`` → its JSON report's one test → the
measurement, as every kvload run)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import ConfigError, DriverError, UsageError
from kvperf.core.jsontypes import JsonObject
from kvperf.driver.base import Measurement, Target
from kvperf.driver.kvload import measurement_from, read_report
from kvperf.driver.tool_run import run_tool

GRACE = 120.0  # seconds a replay may take beyond the trace's span (at its speed)
INFO_TIMEOUT = 300.0


@dataclass(frozen=True)
class TraceFile:
    """A checked trace: its path, sha256 (the trial identity's) and kvload's summary."""

    path: Path
    sha256: str
    info: JsonObject

    @property
    def span_s(self) -> float:
        return float(self.info.get("span_s") or 0.0)

    @property
    def commands(self) -> int:
        return int(self.info.get("commands") or 0)

    @property
    def dropped(self) -> int:
        """Commands `kvload record` dropped from the trace (its gap records): 0 when the
        trace is complete (trace-info's ``dropped`` is null)."""
        found = self.info.get("dropped")
        return int(found.get("records") or 0) if isinstance(found, dict) else 0

    def incomplete(self) -> str | None:
        """What to tell the user of a trace with gaps (None: a complete trace)."""
        if not self.dropped:
            return None
        return (f"trace {self.path.name} is incomplete: {self.dropped} commands were dropped "
                "while it was recorded (kvload record's trace writer was behind; "
                "docs/TRACES.md); the replays send the rest")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_trace(kvload: Path, path: Path, log: Path) -> TraceFile:
    """``kvload trace-info``: the summary, or ConfigError (exit 2) with kvload's reason."""
    if not path.is_file():
        raise ConfigError(f"--trace {path}: no such file")
    output = run_tool([str(kvload), "trace-info", str(path)], cpus=None, timeout=INFO_TIMEOUT,
                      log=log)
    if output.returncode == 2:
        lines = output.stderr.strip().splitlines()
        raise ConfigError(lines[-1] if lines else f"bad trace {path}")
    if output.returncode != 0:
        raise DriverError(f"kvload trace-info exited with code {output.returncode}")
    info = json.loads(output.stdout)
    if not isinstance(info, dict) or info.get("format") != "kvload-trace":
        raise DriverError("kvload trace-info printed no trace summary")
    if not info.get("commands"):
        raise ConfigError(f"--trace {path}: the trace has no commands")
    if info.get("unreplayable"):
        raise ConfigError(f"--trace {path}: {info['unreplayable']}")
    return TraceFile(path, sha256_of(path), info)


@dataclass(frozen=True)
class Replay:
    """How a trace is replayed."""

    speed: str = "1"  # a factor, or "max"
    seed: bool = False  # --seed-from-trace


def replay_argv(kvload: Path, trace: Path, replay: Replay, target: Target,
                report: Path) -> list[str]:
    """argv of one replay (pure)."""
    first = target.first
    argv = [str(kvload), "replay", str(trace), "-h", first.host, "-p", str(first.port),
            "--speed", replay.speed, "-q", "--json", str(report)]
    return argv + (["--seed-from-trace"] if replay.seed else [])


def run_replay(kvload: Path, trace: TraceFile, replay: Replay, target: Target,
               cpus: tuple[int, ...] | None, log: Path) -> Measurement:
    """Replay once; its JSON's test → the measurement (DriverError on failure)."""
    if target.cluster or target.first.tls_ca is not None or target.first.password is not None:
        raise DriverError("kvload replay drives one plain-TCP node without AUTH")
    report = log.with_name("replay.json")
    factor = 1.0 if replay.speed == "max" else float(replay.speed)
    output = run_tool(replay_argv(kvload, trace.path, replay, target, report), cpus=cpus,
                      timeout=GRACE + trace.span_s / factor, log=log)
    if output.returncode != 0:
        lines = (output.stderr or output.stdout).strip().splitlines()
        raise DriverError(f"kvload replay exited with code {output.returncode}: "
                          f"{lines[-1] if lines else '(no output)'}")
    return measurement_from(read_report(report)["tests"][0])


def check_speed(text: str) -> str:
    """--speed: a factor > 0 or ``max`` (UsageError, exit 2)."""
    if text == "max":
        return text
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not factor > 0 or factor == float("inf"):
        raise UsageError(f"--speed must be a factor > 0 or max, got {text!r}")
    return text
