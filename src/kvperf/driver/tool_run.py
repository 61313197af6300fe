"""Running a load tool once: argv list (never a shell), pinning, timeout, output in a log."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.core.proc import TimeoutExpired
from kvperf.server.process import ManagedProcess


@dataclass(frozen=True)
class ToolOutput:
    """What one tool run printed, and how it ended."""

    stdout: str
    stderr: str
    returncode: int
    seconds: float
    cpu_seconds: float  # the tool's user+sys CPU (kvperf runs one tool at a time)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _append_log(log: Path, argv: list[str], out: str, err: str) -> None:
    with log.open("a") as handle:
        handle.write(f"$ {' '.join(argv)}\n{out}")
        if err:
            handle.write(f"[stderr]\n{err}")
        handle.write("\n")


def run_tool(argv: list[str], *, cpus: tuple[int, ...] | None, timeout: float,
             log: Path, env: dict[str, str] | None = None) -> ToolOutput:
    """Run to completion; raise DriverError on timeout (the process is stopped by pid).
    ``env``: the whole environment of the tool (never logged)."""
    started, cpu_before = time.monotonic(), _children_cpu()
    try:
        process = ManagedProcess(argv, cpus=cpus, env=env)
    except OSError as exc:
        raise DriverError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    try:
        out, err = process.communicate(timeout=timeout)
    except TimeoutExpired:
        process.stop(grace=2.0)
        _append_log(log, process.argv, "", f"timed out after {timeout:.0f}s\n")
        raise DriverError(f"{Path(argv[0]).name} did not finish within {timeout:.0f}s") from None
    finally:
        process.stop(grace=2.0)
    _append_log(log, process.argv, out, err)
    return ToolOutput(out, err, process.popen.returncode, time.monotonic() - started,
                      _children_cpu() - cpu_before)


def run_for(argv: list[str], *, cpus: tuple[int, ...] | None, seconds: float,
            log: Path) -> None:
    """Run for ``seconds`` and then stop the process (warmup for tools without --duration)."""
    process = ManagedProcess(argv, cpus=cpus, stdout=log)
    try:
        if process.wait(seconds):
            raise DriverError(f"{Path(argv[0]).name} {process.exit_description()} during "
                              f"warmup; see {log}")
    finally:
        process.stop(grace=2.0)
