"""The JSONPath subset benchmark definitions use, over parsed JSON (pure).

Grammar (what the redis-benchmarks-specification corpus and redisbench-admin write, as
jsonpath-ng reads it): ``$`` then steps ``.name``, ``."quoted name"``, ``.'quoted'``,
``["quoted"]``, ``[3]``, ``.*`` and ``[*]``. A path without ``$`` starts at the root
(``rps`` is ``$.rps``). Examples: ``$."ALL STATS".Totals."Ops/sec"``,
``$."precision_summary".*.qps``, ``$.Tests.Overall.rps``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

WILDCARD = object()
_PLAIN = re.compile(r"[A-Za-z0-9_\-/$@%&+:]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class JsonPathError(ValueError):
    """A path outside the supported subset; the message names the position."""


@dataclass(frozen=True)
class Match:
    """One value a path found, with the concrete path that reaches it."""

    path: str
    value: Any


Step = str | int | object


def _quoted(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    end = text.find(quote, start + 1)
    if end < 0:
        raise JsonPathError(f"unclosed {quote} at position {start} of {text!r}")
    return text[start + 1:end], end + 1


def _dot_step(text: str, pos: int) -> tuple[Step, int]:
    if pos < len(text) and text[pos] == "*":
        return WILDCARD, pos + 1
    if pos < len(text) and text[pos] in "\"'":
        return _quoted(text, pos)
    plain = _PLAIN.match(text, pos)
    if not plain:
        raise JsonPathError(f"expected a name at position {pos} of {text!r}")
    return plain.group(0), plain.end()


def _bracket_step(text: str, pos: int) -> tuple[Step, int]:
    step: Step
    if text.startswith("*", pos):
        step, pos = WILDCARD, pos + 1
    elif pos < len(text) and text[pos] in "\"'":
        step, pos = _quoted(text, pos)
    else:
        digits = re.compile(r"-?\d+").match(text, pos)
        if not digits:
            raise JsonPathError(f"expected an index, a quoted name or * at position {pos} "
                                f"of {text!r}")
        step, pos = int(digits.group(0)), digits.end()
    if not text.startswith("]", pos):
        raise JsonPathError(f"expected ] at position {pos} of {text!r}")
    return step, pos + 1


def parse(text: str) -> tuple[Step, ...]:
    """The steps of ``text`` (JsonPathError when it is outside the subset)."""
    body = text.strip()
    if body.startswith("$"):
        pos = 1
    else:
        body, pos = "." + body, 0
    steps: list[Step] = []
    while pos < len(body):
        if body[pos] == ".":
            step, pos = _dot_step(body, pos + 1)
        elif body[pos] == "[":
            step, pos = _bracket_step(body, pos + 1)
        else:
            raise JsonPathError(f"unexpected {body[pos]!r} at position {pos} of {text!r}")
        steps.append(step)
    return tuple(steps)


def _render(step: str | int) -> str:
    if isinstance(step, int):
        return f"[{step}]"
    return f".{step}" if _IDENTIFIER.fullmatch(step) else f'."{step}"'


def _children(node: Any, step: Step) -> list[tuple[str | int, Any]]:
    if step is WILDCARD:
        if isinstance(node, dict):
            return list(node.items())
        return list(enumerate(node)) if isinstance(node, list) else []
    if isinstance(step, int):
        in_range = isinstance(node, list) and -len(node) <= step < len(node)
        return [(step, node[step])] if in_range else []
    if isinstance(node, dict) and step in node:
        return [(str(step), node[step])]
    return []


def find(path: str, document: Any) -> list[Match]:
    """Every value ``path`` reaches in ``document``, in document order."""
    current: list[tuple[str, Any]] = [("$", document)]
    for step in parse(path):
        current = [(prefix + _render(key), child) for prefix, node in current
                   for key, child in _children(node, step)]
    return [Match(prefix, value) for prefix, value in current]


def has_wildcard(path: str) -> bool:
    return any(step is WILDCARD for step in parse(path))
