"""kvperf's signal handling (cli/main.py): a SIGTERM whose exception Python swallows is
raised again; one that lands in a log record's write (pipeline/run/logs.py) leaves the
``log`` call."""

from __future__ import annotations

import logging
import signal
import sys
import time
from pathlib import Path

import pytest

from kvperf.cli import main
from kvperf.core.errors import Interrupted
from kvperf.pipeline.run.logs import log_to


class _RaisesWhenCollected:
    """Raises as the SIGTERM handler does when the signal lands inside an at-fork hook or a
    ``__del__``: where Python only prints the exception (sys.unraisablehook)."""

    def __del__(self) -> None:
        raise Interrupted("received SIGTERM")


def test_a_sigterm_raised_where_python_swallows_exceptions_is_raised_again() -> None:
    before = (signal.getsignal(signal.SIGTERM), sys.unraisablehook)
    try:
        signal.signal(signal.SIGTERM, main._raise_interrupted)
        sys.unraisablehook = main._redeliver
        with pytest.raises(Interrupted, match="SIGTERM"):
            _RaisesWhenCollected()  # collected at once: its exception is only printed
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # where the signal is raised again
                time.sleep(0.001)
    finally:
        signal.signal(signal.SIGTERM, before[0])
        sys.unraisablehook = before[1]


class _SignalInFormat(logging.Formatter):
    """Raises as the SIGTERM handler does when the signal lands inside a handler's emit,
    where logging's ``except Exception`` prints it as a logging error."""

    def format(self, record: logging.LogRecord) -> str:
        raise Interrupted("received SIGTERM")


@pytest.mark.parametrize("echo", [None, "INFO"])
def test_a_sigterm_inside_a_log_record_s_write_leaves_the_log_call(
        tmp_path: Path, echo: str | None) -> None:
    log_to(tmp_path, echo=echo)
    root = logging.getLogger("kvperf")
    try:
        for handler in root.handlers:
            handler.setFormatter(_SignalInFormat())
        with pytest.raises(Interrupted, match="SIGTERM"):
            logging.getLogger("kvperf.test").info("a record")
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers.clear()
