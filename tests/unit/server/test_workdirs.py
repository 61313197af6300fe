"""Stale server directories of killed kvperf processes are found and removed; live ones stay."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kvperf.server.workdirs import PREFIX, stale_workdirs, sweep_stale


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_only_directories_of_dead_owners_are_swept(tmp_path: Path) -> None:
    dead = tmp_path / f"{PREFIX}{_dead_pid()}-abc"
    live = tmp_path / f"{PREFIX}{os.getpid()}-def"
    old_style = tmp_path / f"{PREFIX}xyz"  # no owner recorded: left alone
    for path in (dead, live, old_style):
        (path / "node0").mkdir(parents=True)
    assert stale_workdirs(tmp_path) == [dead]
    assert sweep_stale(tmp_path) == 1
    assert not dead.exists() and live.exists() and old_style.exists()
