"""The one git runner: ``git`` through core/proc.py, never waiting for a credential prompt,
with one error type (``GitError``) whose message names the git subcommand and ends with the
last line git printed, URL credentials redacted.
"""

from __future__ import annotations

import os
from pathlib import Path

from kvperf.core.errors import CommandError, GitError
from kvperf.core.proc import run

GIT_TIMEOUT = 600.0
_OPTIONS_WITH_VALUE = frozenset({"--git-dir", "-C", "-c", "--work-tree"})


def subcommand(args: tuple[str, ...]) -> str:
    """The git subcommand in ``args`` (after global options such as ``--git-dir X``)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _OPTIONS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return args[0] if args else ""


def git(*args: str, cwd: Path | None = None, timeout: float = GIT_TIMEOUT) -> str:
    """git's stdout. GitError when git is not installed, does not finish within ``timeout``
    seconds, or exits non-zero."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    argv, name = ["git", *args], f"git {subcommand(args)}"
    try:
        return run(argv, cwd=cwd, env=env, timeout=timeout, name=name).check(name).stdout
    except CommandError as exc:
        reason = exc.reason if exc.exited or exc.code != 127 else "failed: git is not installed"
        raise GitError(argv, reason, output=exc.output, code=exc.code, name=name,
                       exited=exc.exited) from None
