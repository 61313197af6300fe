"""logs.txt beside a run's results — INFO and up, or every record of the echo level when it
is lower — and on stderr what the command echoes (run: --log-level; interleaved runs:
warnings; definitions and module runs show their progress themselves and echo nothing)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from kvperf.core.errors import Interrupted

LOG_FILE = "logs.txt"


class _Interruptible(logging.Handler):
    """A handler whose write errors are printed and the run goes on (logging's way), except
    an interruption: SIGTERM's handler raises ``Interrupted`` wherever the main thread is,
    and landing in a handler's ``emit`` it met logging's ``except Exception``, was printed
    as "--- Logging error ---", and the runner ran its job to the end and exited 0
    (test_track_corpus, CI). Raised again here, it leaves the ``log`` call that it hit."""

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, Interrupted):
            raise exc
        super().handleError(record)


class _FileHandler(_Interruptible, logging.FileHandler):
    pass


class _StreamHandler(_Interruptible, logging.StreamHandler):  # type: ignore[type-arg]
    pass


def log_to(out_dir: Path, echo: str | None = None) -> None:
    """kvperf's log records to ``out_dir``/logs.txt and, with ``echo`` (a level name), the
    records of that level and up to stderr; the handlers of an earlier call are replaced."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger("kvperf")
    root.setLevel(logging.DEBUG)
    to_file = _FileHandler(out_dir / LOG_FILE)
    to_file.setLevel(logging.INFO if echo is None
                     else min(logging.INFO, logging.getLevelName(echo)))
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    handlers: list[logging.Handler] = [to_file]
    if echo is not None:
        to_stderr = _StreamHandler()
        to_stderr.setLevel(echo)
        handlers.append(to_stderr)
    for old in root.handlers:
        if isinstance(old, logging.FileHandler):
            old.close()
    root.handlers[:] = handlers
