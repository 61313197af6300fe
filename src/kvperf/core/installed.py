"""Where kvperf finds a program by name: on PATH, else in the environment kvperf runs in.

pip puts kvperf's own programs (kvload, kvflame) in the environment's ``bin/``, which need
not be on PATH (a venv used without activating it); ``pip install --user`` puts them in the
user scheme's.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path


def script_dirs() -> list[Path]:
    """The environment's bin/ (a venv's even when it is not activated), then the user
    scheme's (``pip install --user``)."""
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.prefix) / "bin"),
            sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))]
    return [Path(d) for d in dict.fromkeys(dirs)]


def find_program(name: str) -> Path | None:
    """``name`` on PATH, else installed beside kvperf; None when neither has it."""
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    return next((d / name for d in script_dirs() if (d / name).is_file()), None)
