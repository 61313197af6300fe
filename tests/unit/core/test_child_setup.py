"""core/proc._child_setup: a child whose kvperf died before the child's PR_SET_PDEATHSIG was
set (a `kill -9` between fork and prctl) exits instead of running on orphaned."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

# argv: the file the child creates if it carries on past its setup, the file the parent
# writes the child's pid to before it exits
SCRIPT = """
import os, sys, time
from kvperf.core import proc
parent = os.getpid()
child = os.fork()
if child == 0:
    while os.getppid() == parent:  # the parent is gone before the setup runs
        time.sleep(0.01)
    proc._child_setup(parent)
    open(sys.argv[1], "w").close()
    os._exit(0)
with open(sys.argv[2], "w") as f:
    f.write(str(child))
os._exit(0)
"""


def wait_gone(pid: int, timeout: float = 60) -> None:
    """Return once ``pid`` has exited (no /proc entry, or a zombie no one reaped yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):  # the state, after the name
            return
        assert time.monotonic() < deadline, f"the orphaned child {pid} still runs"
        time.sleep(0.01)


def test_a_child_whose_parent_died_before_its_setup_exits(tmp_path: Path) -> None:
    survived, pid_file = tmp_path / "survived", tmp_path / "child.pid"
    subprocess.run([sys.executable, "-c", SCRIPT, str(survived), str(pid_file)], check=True)
    wait_gone(int(pid_file.read_text()))  # its setup ran, and it exited or carried on
    assert not survived.exists()


def test_a_child_whose_parent_lives_carries_on(tmp_path: Path) -> None:
    survived, pid_file = tmp_path / "survived", tmp_path / "child.pid"
    script = SCRIPT.replace("while os.getppid() == parent:", "while False:").replace(
        "    f.write(str(child))\n", "    f.write(str(child))\nos.wait()\n")
    assert script.count("while False:") == script.count("os.wait()") == 1
    subprocess.run([sys.executable, "-c", script, str(survived), str(pid_file)], check=True)
    assert survived.exists()
