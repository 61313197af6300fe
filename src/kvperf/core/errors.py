"""The exception tree. Only the CLI turns these into exit codes.

Exit codes (DESIGN.md): 0 ok, 1 a trial failed / gate violated, 2 bad input, 130 interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvperf.core.redact import redact_urls


class KvperfError(Exception):
    """Base of every error kvperf raises on purpose; the message is shown to the user."""

    exit_code = 1


class UsageError(KvperfError):
    """Bad flags or arguments: the user must change the command line."""

    exit_code = 2


class ConfigError(UsageError):
    """A benchmark configuration file is missing, unreadable or invalid."""


class BuildError(KvperfError):
    """A clone, checkout or build failed; the message carries the log's tail."""


class CommandError(KvperfError):
    """A command (core/proc.py) could not start, did not finish in time, or exited non-zero.

    The message names the command and ends with the last line of its output; ``tail`` gives
    more. URL credentials are redacted from both. ``code`` follows the shell: 127 not found,
    126 not executable, 124 timed out, else the command's own exit code; ``exited`` tells a
    command that ran and failed from one that could not start or was killed.
    """

    def __init__(self, argv: Sequence[str], reason: str, *, output: str = "", code: int = 1,
                 name: str | None = None, exited: bool = False) -> None:
        self.argv, self.reason, self.output, self.code = tuple(argv), reason, output, code
        self.exited = exited
        last = self.tail(1)
        shown = name or " ".join(self.argv)
        super().__init__(redact_urls(f"{shown} {reason}" + (f": {last}" if last else "")))

    def tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the command's output, credentials redacted."""
        return redact_urls("\n".join(self.output.strip().splitlines()[-lines:]))


class GitError(CommandError):
    """A git command failed (core/git.py): git missing, timed out, or a non-zero exit."""


class ServerError(KvperfError):
    """A server could not be started, became unhealthy, or crashed."""


class DriverError(KvperfError):
    """A load tool failed, timed out, or produced output that measures nothing."""


class StoreError(KvperfError):
    """Results could not be written or read."""


class Interrupted(KvperfError):
    """SIGINT or SIGTERM arrived; finished results are kept."""

    exit_code = 130
