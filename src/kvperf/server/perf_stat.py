"""Hardware instruction counts with ``perf stat -e instructions`` around the measure stage.

The fast alternative to callgrind (no slowdown) where the CPU's performance counters are
visible. On many VMs the hypervisor hides them: perf then prints ``<not supported>`` for the
event, and kvperf says so plainly instead of recording zeros.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

from kvperf.core.errors import ServerError
from kvperf.core.proc import probe
from kvperf.server.process import ManagedProcess

PERF = "perf"
EVENT = "instructions"
NOT_COUNTED = ("<not supported>", "<not counted>")


def parse_count(text: str) -> int | None:
    """The instructions count from ``perf stat -x,`` output; None when not counted (pure).

    Each CSV line is ``value,unit,event,…`` (perf-stat(1), "CSV FORMAT").
    """
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and fields[2].split(":")[0] == EVENT:
            value = fields[0].strip()
            if value in NOT_COUNTED:
                return None
            try:
                return int(float(value))
            except ValueError:
                return None
    return None


def unsupported() -> str | None:
    """Why ``perf stat -e instructions`` cannot count here (None when it can)."""
    if shutil.which(PERF) is None:
        return "perf is not installed (Debian package 'linux-perf')"
    code, output = probe([PERF, "stat", "-e", EVENT, "-x,", "--", "true"], timeout=20.0)
    if code != 0 and not output:
        return f"'perf stat -e {EVENT}' failed with exit code {code}"
    if parse_count(output) is None:
        shown = next((ln.strip() for ln in output.splitlines() if EVENT in ln), output.strip())
        return (f"this machine does not count hardware instructions: 'perf stat -e {EVENT}' "
                f"reports {shown[:120]!r} (hardware performance counters are not exposed, "
                "as on most VMs); use --measure instructions (callgrind) instead")
    return None


class PerfCounter:
    """``perf stat`` attached to the server pids for the duration of the measure stage."""

    def __init__(self, pids: list[int], out_dir: Path) -> None:
        self.output = out_dir / "perf-stat.csv"
        argv = [PERF, "stat", "-e", EVENT, "-x,", "-o", str(self.output),
                "-p", ",".join(map(str, pids))]
        self.process = ManagedProcess(argv)

    def stop(self) -> int:
        """Stop perf (SIGINT makes it print its counts) and return the instructions counted."""
        self.process.stop(graceful=lambda: self.process.popen.send_signal(signal.SIGINT))
        try:
            count = parse_count(self.output.read_text())
        except OSError:
            count = None
        if count is None:
            raise ServerError(f"perf stat counted no {EVENT}; see {self.output}")
        return count
