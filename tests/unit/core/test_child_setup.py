"""core/proc._child_setup: a child whose kvperf died before the child's PR_SET_PDEATHSIG was
set (a `kill -9` between fork and prctl) exits instead of running on orphaned."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

SCRIPT = """
import os, sys, time
from kvperf.core import proc
parent = os.getpid()
if os.fork() == 0:
    while os.getppid() == parent:  # the parent is gone before the setup runs
        time.sleep(0.01)
    proc._child_setup(parent)
    open(sys.argv[1], "w").close()
    os._exit(0)
os._exit(0)
"""


def test_a_child_whose_parent_died_before_its_setup_exits(tmp_path: Path) -> None:
    survived = tmp_path / "survived"
    subprocess.run([sys.executable, "-c", SCRIPT, str(survived)], check=True)
    time.sleep(1)  # the orphaned child has run its setup by now
    assert not survived.exists()


def test_a_child_whose_parent_lives_carries_on(tmp_path: Path) -> None:
    survived = tmp_path / "survived"
    script = SCRIPT.replace("while os.getppid() == parent:", "while False:")
    subprocess.run([sys.executable, "-c", script.replace("os._exit(0)\nos._exit(0)",
                    "os._exit(0)\nos.wait()\nos._exit(0)"), str(survived)], check=True)
    assert survived.exists()
