"""Path options resolved once, at the edge: every path a user types is made absolute against
the current directory as argparse reads it, so nothing downstream depends on the working
directory (servers run in their own directory and read certificates, modules and the fixed
/dev/urandom file by the paths they are given)."""

from __future__ import annotations

import os
from pathlib import Path


def local_path(text: str) -> Path:
    """A file or directory path typed by the user, absolute (``~`` expanded)."""
    return Path(os.path.abspath(Path(text).expanduser()))


def command_path(text: str) -> str:
    """An executable: a bare name (``valkey-server``) is looked up on PATH later and kept as
    it is; anything with a slash is a path and made absolute."""
    return str(local_path(text)) if os.sep in text or text.startswith("~") else text
