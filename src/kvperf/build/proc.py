"""The build stage's one way to run a command: output to a log, lines to a callback.

Commands run in their own session so an interrupt stops the whole process group
(make's children too) by the pid kvperf started, never by name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from kvperf.core.errors import BuildError

LineSink = Callable[[str], None]


def _stop_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_logged(argv: Sequence[str], log_path: Path, cwd: Path | None = None,
               env: dict[str, str] | None = None, on_line: LineSink | None = None) -> int:
    """Run ``argv``, appending stdout+stderr to ``log_path``; returns the exit code."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        try:
            proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace",
                                    start_new_session=True)
        except OSError as exc:
            raise BuildError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if on_line:
                    on_line(line.rstrip("\n"))
            return proc.wait()
        except BaseException:
            _stop_group(proc)
            raise


def run_capture(argv: Sequence[str], cwd: Path | None = None, timeout: float = 600,
                env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run a short command; (exit code, stdout+stderr)."""
    try:
        done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                              errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise BuildError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise BuildError(f"{' '.join(argv)} did not finish in {timeout:.0f} s") from None
    return done.returncode, done.stdout + done.stderr


def tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file (for error messages)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])
