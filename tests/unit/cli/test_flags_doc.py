"""docs/guide/flags.md lists every flag of every command, and only flags the command has: its
tables are compared with the real argparse tree (walked, not listed by hand). A shared group
("### NAME" with a "Taken by:" line) counts for each command it names; a command's own section
has a table of `flag | meaning`, or `command | flag | meaning` rows for several commands."""

from __future__ import annotations

import argparse
import re

from kvperf.cli.main import build_parser
from tests.helpers import ROOT

DOC = ROOT / "docs" / "guide" / "flags.md"
LONG_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def parser_flags(parser: argparse.ArgumentParser,
                 prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], set[str]]:
    """Per subcommand path, its long options (--help aside)."""
    flags = {prefix: {option for action in parser._actions for option in action.option_strings
                      if option.startswith("--") and option != "--help"}}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                flags.update(parser_flags(sub, (*prefix, name)))
    return flags


PARSER = build_parser()
FLAGS = parser_flags(PARSER)


def _command_path(text: str) -> tuple[str, ...]:
    """`clients install NAME…` / `kvperf run` → the subcommand path its words start with."""
    words = [w for w in text.replace("`", " ").split() if w != "kvperf"]
    path: tuple[str, ...] = ()
    for word in words:
        if (*path, word) not in FLAGS:
            break
        path = (*path, word)
    return path


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def documented_flags() -> dict[tuple[str, ...], set[str]]:
    """Per subcommand path, the flags flags.md gives it (groups included)."""
    documented: dict[tuple[str, ...], set[str]] = {}
    groups: list[tuple[set[tuple[str, ...]], set[str]]] = []
    section: tuple[str, ...] | None = None
    group: tuple[set[tuple[str, ...]], set[str]] | None = None
    columns = 0
    lines = DOC.read_text().replace("\\|", "/").splitlines()
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        if line.startswith("## "):
            section = _command_path(line[3:]) if "`kvperf " in line else None
            group = None
        elif line.startswith("### "):
            group = (set(), set())
            groups.append(group)
        elif group is not None and (line.startswith("Taken by:")
                                    or (line.startswith("`") and group[0])):  # wrapped on
            group[0].update(_command_path(name) for name in re.findall(r"`([^`]+)`", line))
        elif line.startswith("| ---"):
            continue
        elif line.startswith("|"):
            cells = _cells(line)
            if following.startswith("| ---"):  # a header: which column holds the flags
                columns = len(cells) if cells[0] in ("flag", "command") else 0
                continue
            if not columns:
                continue
            found = set(LONG_FLAG.findall(cells[columns - 2]))
            if group is not None:
                group[1].update(found)
            elif columns == 3:
                documented.setdefault(_command_path(cells[0]), set()).update(found)
            elif section is not None:
                documented.setdefault(section, set()).update(found)
    for commands, found in groups:
        for path in commands:
            documented.setdefault(path, set()).update(found)
    return documented


DOCUMENTED = documented_flags()


def test_the_tables_are_read() -> None:
    assert {"--rate-sweep", "--db", "--config", "--quick"} <= DOCUMENTED[("run",)]
    assert {"--db", "--results-dir", "--runner", "--lease"} <= DOCUMENTED[("track", "claim")]
    assert "--version" in DOCUMENTED[()]
    assert "--schedule" not in DOCUMENTED.get(("history",), set())


def test_every_flag_of_every_command_is_documented() -> None:
    missing = {" ".join(("kvperf", *path)): sorted(flags - DOCUMENTED.get(path, set()))
               for path, flags in FLAGS.items() if flags - DOCUMENTED.get(path, set())}
    assert not missing, f"flags missing from docs/guide/flags.md: {missing}"


def test_every_documented_flag_exists() -> None:
    extra = {" ".join(("kvperf", *path)): sorted(flags - FLAGS.get(path, set()))
             for path, flags in DOCUMENTED.items() if flags - FLAGS.get(path, set())}
    assert not extra, f"docs/guide/flags.md gives commands flags they do not have: {extra}"
