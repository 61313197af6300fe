"""The one module that starts child processes: short commands, logged builds, long-lived
servers and load tools (through server/process.ManagedProcess).

Every child runs in its own session, so a terminal's Ctrl-C reaches only kvperf, which then
stops what it started: a short command's whole process group (make's children too) is
killed on timeout or interrupt, by the pid kvperf started, never by name. Long-lived
children also get SIGKILL from the kernel if kvperf itself dies (PR_SET_PDEATHSIG).
Failures to start, timeouts and (with ``check``) non-zero exits are one ``CommandError``.

Under ``chrt -f``/``-r`` kvperf itself returns to SCHED_OTHER (``leave_realtime``) and its
long-lived children (servers, load tools, client harnesses) get the real-time policy back.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kvperf.core.errors import CommandError

LineSink = Callable[[str], None]
TimeoutExpired = subprocess.TimeoutExpired  # what Popen.wait/communicate raise
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Completed:
    """A finished command: its argv, exit code and what it wrote to stdout and stderr."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout then stderr."""
        return self.stdout + self.stderr

    def check(self, name: str | None = None) -> Completed:
        """Itself when the exit code is 0; CommandError naming the command otherwise."""
        if self.returncode != 0:
            raise CommandError(self.argv, f"failed (exit {self.returncode})",
                               output=self.output, code=self.returncode, name=name,
                               exited=True)
        return self


def _start_error(argv: Sequence[str], exc: OSError, name: str | None) -> CommandError:
    if isinstance(exc, FileNotFoundError):
        return CommandError(argv, "not found", code=127, name=name)
    if isinstance(exc, PermissionError):
        return CommandError(argv, "not executable", code=126, name=name)
    return CommandError(argv, f"could not start: {exc.strerror or exc}", code=126, name=name)


def _child_env(env: dict[str, str] | None) -> dict[str, str]:
    """The environment a child gets: ``env``, else a copy of kvperf's own taken now.

    Never None (inherit): the child would then read the C library's ``environ`` while it
    starts, and with vfork (Python 3.11's default, the GIL released meanwhile) it reads it
    in kvperf's own memory. A thread that sets or removes a variable at that moment (pytest
    does, PYTEST_CURRENT_TEST, at every test phase) reallocates that array, and the exec
    failed with "Bad address" (EFAULT): 13 times in 20 s of probes beside such a thread,
    twice in CI's memtier conformance module. A copy is built before the fork and is the
    child's alone."""
    return dict(os.environ) if env is None else env


def stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the process group kvperf started, SIGKILL it after 10 s; reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run(argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 600.0, name: str | None = None) -> Completed:
    """Run a short command to completion with stdin closed, capturing stdout and stderr.

    CommandError when it cannot start or does not finish within ``timeout`` seconds (its
    process group is then killed); a non-zero exit is returned (see ``Completed.check``).
    ``name`` replaces the argv in messages.
    """
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=_child_env(env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
    except OSError as exc:
        raise _start_error(argv, exc, name) from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        raise CommandError(argv, f"timed out after {timeout:.0f} s", code=124,
                           name=name) from None
    except BaseException:
        stop_group(proc)
        raise
    return Completed(tuple(argv), proc.returncode, out, err)


def probe(argv: Sequence[str], timeout: float = 10.0) -> tuple[int, str]:
    """(exit code, stdout+stderr) of a quick probe such as ``--version``; never raises for
    the command: one that cannot run gives 127/126/124 and ``"<argv0>: <why>"``."""
    try:
        done = run(argv, timeout=timeout)
    except CommandError as exc:
        return exc.code, f"{argv[0]}: {exc.reason}"
    return done.returncode, done.output


def run_logged(argv: Sequence[str], log_path: Path, cwd: Path | None = None,
               env: dict[str, str] | None = None, on_line: LineSink | None = None) -> int:
    """Run ``argv``, appending stdout+stderr to ``log_path`` and passing each line to
    ``on_line``; returns the exit code (CommandError only when it cannot start)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        try:
            proc = subprocess.Popen(list(argv), cwd=cwd, env=_child_env(env),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT,
                                    text=True, errors="replace", start_new_session=True)
        except OSError as exc:
            raise _start_error(argv, exc, None) from None
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if on_line:
                    on_line(line.rstrip("\n"))
            return proc.wait()
        except BaseException:
            stop_group(proc)
            raise


_REALTIME_POLICIES = (os.SCHED_FIFO, os.SCHED_RR)
_children_policy: tuple[int, int] | None = None  # (policy, priority) set by leave_realtime


def leave_realtime() -> None:
    """kvperf started under a real-time policy (``chrt -f 10 kvperf …``): kvperf's own
    process returns to SCHED_OTHER and remembers the policy for the long-lived children it
    starts (``_child_setup``), the processes being measured. Call it before any thread.

    Why: reaping a child (wait4) invalidates its /proc entries, and that can wait on a
    SCHED_OTHER task. With real-time kvperf processes busy on every core that task never
    ran: kvperf spun in the kernel (d_walk under release_task) at ~95% system CPU for
    minutes, deaf to SIGKILL until ``chrt -o`` — the hang of long sweeps under chrt."""
    global _children_policy
    policy = os.sched_getscheduler(0)
    if policy in _REALTIME_POLICIES:
        _children_policy = (policy, os.sched_getparam(0).sched_priority)
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def _child_setup(parent: int) -> None:
    """Runs in a long-lived child between fork and exec: SIGKILL this child when kvperf
    dies; the real-time policy kvperf was started with (``leave_realtime``), if any.

    ``parent`` is kvperf's pid, read before the fork (``_setup_for_child``): a kvperf killed
    between the fork and the prctl never signals the child, so it exits here instead of
    starting orphaned (a server outlived `kill -9` of kvperf this way in
    test_store_postgres.py)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
    if _children_policy is not None:
        policy, priority = _children_policy
        with contextlib.suppress(OSError):  # allowed for kvperf a moment ago: not expected
            os.sched_setscheduler(0, policy, os.sched_param(priority))


def _setup_for_child() -> Callable[[], None]:
    """``_child_setup`` bound to this process's pid, for ``preexec_fn``."""
    parent = os.getpid()
    return lambda: _child_setup(parent)


def spawn(argv: Sequence[str], *, log: IO[bytes] | None = None,
          cwd: Path | None = None, env: dict[str, str] | None = None,
          stdin_pipe: bool = False) -> subprocess.Popen[bytes]:
    """Start a long-lived child (stdin closed; output to ``log``, else two pipes) in its own
    session, killed by the kernel if kvperf dies. Raises OSError when it cannot start.
    ``env`` (default: kvperf's own) is how a secret reaches a child without its argv;
    ``stdin_pipe``: a pipe the caller writes to (and closes, to tell the child to end)."""
    return subprocess.Popen(
        list(argv), stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
        stdout=log or subprocess.PIPE,
        stderr=subprocess.STDOUT if log else subprocess.PIPE, cwd=cwd, env=_child_env(env),
        start_new_session=True, preexec_fn=_setup_for_child(),
    )


@dataclass(frozen=True)
class Measured:
    """A finished child measured by ``run_measured``: its exit code (None: killed at the
    deadline), its tree's user and system CPU seconds and peak RSS (the largest of the
    child and the descendants it waited for, KiB) from wait4(2)."""

    returncode: int | None
    user_s: float
    system_s: float
    max_rss_kib: int
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_measured(argv: Sequence[str], *, stdout: Path, stderr: Path, cwd: Path,
                 env: dict[str, str], deadline: float) -> Measured:
    """Run ``argv`` (stdin closed, output to two files, its own process group) until it
    exits or ``deadline`` seconds pass; its process group is killed by the pid kvperf
    started in every case (what it left behind too), and on any exception. CPU and peak
    RSS come from wait4(2) of this child alone (never from RUSAGE_CHILDREN, which other
    threads' children would share). CommandError when it cannot start."""
    started = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        try:
            child = subprocess.Popen(list(argv), cwd=cwd, env=_child_env(env),
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                     start_new_session=True, preexec_fn=_setup_for_child())
        except OSError as exc:
            raise _start_error(argv, exc, None) from None
    try:
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                child.returncode = os.waitstatus_to_exitcode(status)
                return Measured(child.returncode, usage.ru_utime, usage.ru_stime,
                                usage.ru_maxrss, time.monotonic() - started)
            if time.monotonic() - started > deadline:
                _kill_group(child.pid)
                _, _, usage = os.wait4(child.pid, 0)
                child.returncode = -signal.SIGKILL
                return Measured(None, usage.ru_utime, usage.ru_stime, usage.ru_maxrss,
                                time.monotonic() - started)
            time.sleep(0.02)
    except BaseException:
        _kill_group(child.pid)
        with contextlib.suppress(ChildProcessError):
            os.wait4(child.pid, 0)
        raise
    finally:
        _kill_group(child.pid)  # what the child left in its group (no strays)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def file_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file (for error messages); empty when it cannot be read."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])
