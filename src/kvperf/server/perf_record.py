"""Sampling profiles with ``perf record`` attached by pid to a server node.

The software ``cpu-clock`` event is used because hardware events are missing on most VMs
(and it samples the same way where they exist). Call graphs are frame-pointer walks (``fp``,
small files; whole stacks for Debian's valkey-server) or DWARF unwinding (``dwarf``, for
binaries built without frame pointers; ~30x larger perf.data). Kernel frames are recorded
when ``kernel.perf_event_paranoid`` allows them (≤ 1, or root); otherwise user frames only.

Wall-time mode adds every ``sched:sched_switch`` (the stack a thread blocks or is preempted
in) and perf's switch records (``--switch-events``: when each thread leaves and re-enters a
CPU), so off-CPU time can be weighed by its blocking stack (results/walltime.py). It needs
the tracepoint, so root (or ``perf_event_paranoid`` -1).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import signal
import time
from pathlib import Path

from kvperf.core.errors import ServerError
from kvperf.core.proc import run
from kvperf.server.process import ManagedProcess

PERF = "perf"
EVENT = "cpu-clock"
SWITCH_EVENT = "sched:sched_switch"
CALL_GRAPHS = ("fp", "dwarf")
PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
STOP_GRACE = 30.0  # perf writes its buildids after SIGINT
CONTROL_TIMEOUT = 20.0  # perf's start-up (attach, mmap) and acknowledging a command


def paranoid_level(path: Path = PARANOID) -> int | None:
    """``kernel.perf_event_paranoid`` (None when unreadable)."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def kernel_stacks_note(level: int | None, root: bool) -> str | None:
    """Why kernel frames are missing from the profile (None: they are recorded) (pure)."""
    if root or (level is not None and level <= 1):
        return None
    return (f"kernel.perf_event_paranoid is {level}: user-space stacks only; "
            "sysctl kernel.perf_event_paranoid=1 (or run as root) adds kernel frames")


def unavailable(level: int | None, root: bool) -> str | None:
    """Why ``perf record -p`` cannot attach to a server here (None when it can)."""
    if shutil.which(PERF) is None:
        return "perf is not installed (Debian package 'linux-perf')"
    if not root and level is not None and level > 2:
        return (f"kernel.perf_event_paranoid is {level}, which forbids attaching perf to "
                "a process; run 'sysctl kernel.perf_event_paranoid=2' (or lower) or run "
                "as root")
    return None


def wall_time_unavailable(level: int | None, root: bool) -> str | None:
    """Why wall-time profiling cannot record context switches here (None when it can)."""
    if root or level == -1:
        return None
    return (f"wall-time profiling records the {SWITCH_EVENT} tracepoint, which needs root "
            f"or kernel.perf_event_paranoid=-1 (it is {level})")


def events(frequency: int, kernel: bool, wall_time: bool) -> list[str]:
    """perf record's event arguments: cpu-clock at ``frequency`` (plus, in wall-time mode,
    every context switch with its stack, and the switch records) (pure)."""
    clock = f"{EVENT}/freq={frequency}/" + ("" if kernel else "u")
    if not wall_time:
        return ["-e", clock]
    return ["-e", clock, "-e", SWITCH_EVENT, "--switch-events"]


def is_root() -> bool:
    return os.geteuid() == 0


def started_as(pid: int) -> dict[str, str]:
    """The name perf gives a process's executable (the file it resolves to) → the name it
    was started as, when they differ: Debian's valkey-server is a symlink to
    valkey-check-rdb, which perf's DSO column shows. Empty when /proc cannot tell."""
    try:
        real = Path(os.readlink(f"/proc/{pid}/exe")).name
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return {}
    # argv[0]'s first word: the server rewrites its title ("valkey-server 127.0.0.1:6379")
    started = Path(cmdline[0].decode(errors="replace")).name if cmdline else ""
    return {real: started} if started and real and started != real else {}


class PerfRecorder:
    """``perf record`` on one pid, sampling only between ``start`` and ``stop``.

    perf starts with its events disabled (``-D -1``) and takes ``enable`` / ``disable`` on a
    control FIFO, acknowledging each on a second one (perf-record(1), ``--control``): so the
    profile covers exactly the measure stage, not perf's own start-up, however long that is.
    """

    def __init__(self, pid: int, data: Path, frequency: int, call_graph: str,
                 kernel: bool, wall_time: bool = False) -> None:
        self.data = data
        self.fifos = (data.with_suffix(".ctl"), data.with_suffix(".ack"))
        for fifo in self.fifos:
            fifo.unlink(missing_ok=True)
            os.mkfifo(fifo)
        # --no-bpf-event: perf's side-band thread for BPF program loads (nothing a server
        # profile needs) held every perf record ~0.7 s after SIGINT, for each profiled trial
        argv = [PERF, "record", *events(frequency, kernel, wall_time), "--call-graph",
                call_graph, "--no-bpf-event", "-D", "-1", "--control",
                f"fifo:{self.fifos[0]},{self.fifos[1]}", "-p", str(pid), "-o", str(data)]
        self.log = data.with_suffix(".log")
        self.process = ManagedProcess(argv, stdout=self.log)

    def start(self) -> None:
        """Enable sampling; returns once perf has acknowledged (ServerError if it cannot)."""
        self._command("enable")

    def pause(self) -> None:
        """Disable sampling (the end of a profiling window); perf keeps running."""
        self._command("disable")

    def stop(self) -> None:
        """Disable sampling, then SIGINT (perf writes perf.data); ServerError when no
        perf.data appeared. The control FIFOs are removed."""
        try:
            with contextlib.suppress(ServerError):
                self._command("disable")
            self.process.stop(graceful=lambda: self.process.popen.send_signal(signal.SIGINT),
                              grace=STOP_GRACE)
        finally:
            for fifo in self.fifos:
                fifo.unlink(missing_ok=True)
        if not self.data.is_file() or self.data.stat().st_size == 0:
            raise ServerError(f"perf record wrote no {self.data.name}; see {self.log}")

    def _failed(self, what: str) -> ServerError:
        return ServerError(f"perf record ({self.process.exit_description()}) {what}; "
                           f"see {self.log}")

    def _open_control(self, deadline: float) -> int:
        """The control FIFO's write end, once perf has opened its read end."""
        while True:
            try:
                return os.open(self.fifos[0], os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise self._failed(f"control FIFO: {exc}") from None
            if not self.process.alive() or time.monotonic() > deadline:
                raise self._failed("did not open its control FIFO")
            time.sleep(0.005)

    def _command(self, word: str) -> None:
        deadline = time.monotonic() + CONTROL_TIMEOUT
        control = self._open_control(deadline)
        ack = os.open(self.fifos[1], os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.write(control, f"{word}\n".encode())
            received = b""
            while b"ack" not in received:
                if not self.process.alive() or time.monotonic() > deadline:
                    raise self._failed(f"did not acknowledge {word!r}")
                ready, _, _ = select.select([ack], [], [], 0.05)
                chunk = os.read(ack, 64) if ready else b""
                received += chunk
                if ready and not chunk:
                    time.sleep(0.005)  # no writer yet: the read end reports EOF
        finally:
            os.close(control)
            os.close(ack)


WALL_SCRIPT = ["--show-switch-events", "-F", "comm,tid,time,event,ip,sym"]


def launch_argv(argv: list[str], data: Path, frequency: int, call_graph: str,
                kernel: bool) -> list[str]:
    """``argv`` started under ``perf record`` (pure): sampled from its exec, with every
    thread and child it starts (they inherit the event), for a process kvperf launches (a
    client harness) rather than one already running. perf exits with the child's status."""
    return [PERF, "record", *events(frequency, kernel, False), "--call-graph", call_graph,
            "--no-bpf-event", "-q", "-o", str(data), "--", *argv]


def perf_script(data: Path, out: Path, wall_time: bool = False) -> None:
    """``perf script`` text of a recording (the input of kvflame collapse; in wall-time mode
    with the switch records and times, for results/walltime.py)."""
    extra = WALL_SCRIPT if wall_time else []
    done = run([PERF, "script", "-i", str(data), *extra], timeout=600.0, name="perf script")
    done.check()
    out.write_text(done.stdout)


def perf_report(data: Path, sort: str) -> str:
    """``perf report --stdio --no-children --sort SORT`` text (self CPU per SORT key)."""
    done = run([PERF, "report", "--stdio", "--no-children", "-g", "none", "--sort", sort,
                "-i", str(data)],
               timeout=600.0, name=f"perf report --sort {sort}")
    return done.check().stdout
