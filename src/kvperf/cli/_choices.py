"""argparse types for the named choices of core/kinds.py: the flag's value becomes the enum,
and a wrong word gets argparse's own "invalid choice" message listing the words."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


def enum_choice(kind: type[E]) -> Callable[[str], E]:
    def parse(text: str) -> E:
        try:
            return kind(text)
        except ValueError:
            words = ", ".join(repr(k.value) for k in kind)
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} (choose from {words})") from None

    parse.__name__ = kind.__name__.lower()
    return parse
