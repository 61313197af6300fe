"""The exception tree. Only the CLI turns these into exit codes.

Exit codes (DESIGN.md): 0 ok, 1 a trial failed / gate violated, 2 bad input, 130 interrupted.
"""

from __future__ import annotations


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


class ServerError(KvperfError):
    """A server could not be started, became unhealthy, or crashed."""


class DriverError(KvperfError):
    """A load tool failed, timed out, or produced output that measures nothing."""


class StoreError(KvperfError):
    """Results could not be written or read."""


class Interrupted(KvperfError):
    """SIGINT or SIGTERM arrived; finished results are kept."""

    exit_code = 130
