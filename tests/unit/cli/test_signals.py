"""kvperf's signal handling (cli/main.py): a SIGTERM whose exception Python swallows is
raised again."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from kvperf.cli import main
from kvperf.core.errors import Interrupted


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
