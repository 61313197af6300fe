"""`kvperf suites`: the built-in suites (config/suites.py), each with the line of what it
measures and, when asked, its config file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.config.suites import SUITES, suite_path
from kvperf.pipeline.request.stored import SuitesRequest

__all__ = ["SUITES", "Suite", "suites"]


@dataclass(frozen=True)
class Suite:
    """A built-in suite: its name, what it runs, its JSON file (with --paths)."""

    name: str
    line: str
    path: Path | None = None


def suites(request: SuitesRequest) -> list[Suite]:
    """Every built-in suite, in the order SUITES lists them."""
    return [Suite(name, line, suite_path(name) if request.paths else None)
            for name, line in SUITES.items()]
