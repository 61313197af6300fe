"""Server working directories: one temp dir per server group, named after the kvperf process
that owns it (``kvperf-server-<pid>-XXXX``). A kvperf killed with SIGKILL cannot remove its
own; the next kvperf to start a server removes every such directory whose owner is gone."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "kvperf-server-"
_OWNED = re.compile(rf"^{PREFIX}(\d+)-")


def make_workdir() -> Path:
    """A fresh directory owned by this process (removed by the caller's teardown)."""
    sweep_stale()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def stale_workdirs(root: Path) -> list[Path]:
    """Directories under ``root`` whose owning kvperf process no longer exists."""
    found = []
    for entry in root.glob(f"{PREFIX}*"):
        match = _OWNED.match(entry.name)
        if match and entry.is_dir() and not _alive(int(match.group(1))):
            found.append(entry)
    return found


def sweep_stale(root: Path | None = None) -> int:
    """Remove the stale directories (servers die with their kvperf, so none is in use)."""
    stale = stale_workdirs(root or Path(tempfile.gettempdir()))
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return len(stale)
