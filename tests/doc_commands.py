"""The `kvperf …` commands of the documentation's fenced code blocks (pure).

A command is a shell command whose program is `kvperf` (or a path ending in `/kvperf`, such
as `.venv/bin/kvperf`), optionally after `time` and `NAME=value` assignments: at the start of
a line, after `;`, `&&`, `||` or `|`, or inside `$(…)` such as `job=$(kvperf track claim …)`.
It ends at the line's end, at the next of those separators or at the `)` closing its `$(`.
Lines joined at a trailing backslash count as one; a trailing `# comment` is dropped; runs of
blanks become one. What is left — assignments included, `time` not — is the command's key,
exactly as the documentation writes it (tests/docs_examples.py is keyed by it). Other programs
(pip, cargo, kvload, python3) are not extracted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
# kvperf as the program of a command: where a command starts, after `time` and assignments
PROGRAM = re.compile(r"(?:^|[;&|(])\s*(?:time\s+)?((?:\w+=\S*\s+)*(?:[\w.~/-]*/)?kvperf)"
                     r"(?=\s|$|[;&|)])")


@dataclass(frozen=True)
class DocCommand:
    """One documented kvperf command and where it is written (file:line of its first line)."""

    text: str
    source: str


def fenced_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line inside a fenced code block."""
    inside: str | None = None
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence and (inside is None or fence.group(1) == inside):
            inside = fence.group(1) if inside is None else None
        elif inside is not None:
            yield number, line


def logical_lines(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Lines joined at a trailing backslash (the first physical line's number)."""
    pending: list[str] = []
    start = 0
    for number, line in lines:
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        yield start, " ".join(part.strip() for part in pending)
        pending = []
    if pending:
        yield start, " ".join(part.strip() for part in pending)


def strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a `#` outside quotes, after a blank)."""
    quote: str | None = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip()
    return line.rstrip()


def command_end(text: str) -> int:
    """Where the command at the start of ``text`` ends: a `;`, `&`, `|` or an unmatched `)`
    outside quotes and nested parentheses, else the end of ``text``."""
    depth = 0
    quote: str | None = None
    for index, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif char in ";&|)" and not depth:
            return index
    return len(text)


def commands_in_line(line: str) -> list[str]:
    """The kvperf commands of one logical line, comment stripped, blanks collapsed."""
    line = " ".join(strip_comment(line).split())
    found = []
    for match in PROGRAM.finditer(line):
        rest = line[match.start(1):]
        found.append(rest[:command_end(rest)].strip())
    return found


def commands_in_markdown(markdown: str, name: str) -> list[DocCommand]:
    return [DocCommand(text, f"{name}:{number}")
            for number, line in logical_lines(fenced_lines(markdown))
            for text in commands_in_line(line)]


def doc_files(root: Path) -> list[Path]:
    """The documentation's markdown files besides README.md: docs/**/*.md, sorted."""
    return sorted((root / "docs").rglob("*.md"))


def documented_commands(root: Path) -> list[DocCommand]:
    """Every kvperf command of README.md and docs/**/*.md (the guide in docs/guide/ too), in
    document order."""
    files = [root / "README.md", *doc_files(root)]
    return [command for path in files
            for command in commands_in_markdown(path.read_text(), str(path.relative_to(root)))]
