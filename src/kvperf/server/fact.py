"""One line of ``kvperf doctor``: a fact about this machine, how it bears on measurements, a hint.

Statuses: ``ok`` (fine for benchmarking), ``warn`` (present but hurts measurements; the hint
says what to do), ``missing`` (a tool or feature is absent), ``unknown`` (this machine does not
expose it; the hint says why). ``value`` is the machine-readable form (None when missing or
unknown); ``text`` is what the table shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "warn", "missing", "unknown"]
STATUSES: tuple[Status, ...] = ("ok", "warn", "missing", "unknown")


@dataclass(frozen=True)
class Fact:
    """A named fact: stable ``key`` (JSON), ``label`` (table), value, status and hint."""

    key: str
    label: str
    value: Any
    text: str
    status: Status
    hint: str = ""


def unknown(key: str, label: str, why: str) -> Fact:
    """A fact this machine does not expose; ``why`` becomes the hint."""
    return Fact(key, label, None, "unknown", "unknown", why)


def missing(key: str, label: str, hint: str) -> Fact:
    """A tool or feature that is not there."""
    return Fact(key, label, None, "not found", "missing", hint)


@dataclass(frozen=True)
class Section:
    """A titled group of facts (one block of the table)."""

    title: str
    facts: tuple[Fact, ...]
