"""Every help text of the real command lines: the whole argparse tree of kvperf (walked,
not listed by hand) and kvload. Exit 0, the usage line, no traceback — and the text a user
reads: no format escapes left in it (`%%`, `%(`), the percent signs of the descriptions as
written, and every flag the documentation's examples give that subcommand."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess

import pytest

from kvperf.cli.main import build_parser
from tests.doc_commands import documented_commands
from tests.helpers import ROOT, require_binary, run_main

PARSER = build_parser()


def _subcommand_paths(parser: argparse.ArgumentParser,
                      prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += _subcommand_paths(sub, (*prefix, name))
    return paths


PATHS = _subcommand_paths(PARSER)


def _path_of(words: list[str]) -> tuple[str, ...]:
    """The subcommand path a documented command's words after `kvperf` start with."""
    parser = PARSER
    path: tuple[str, ...] = ()
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser, path = subs[0].choices[word], (*path, word)
    return path


def documented_flags() -> dict[tuple[str, ...], set[str]]:
    """Per subcommand path, the flags its documented examples (README.md, docs/**/*.md) give,
    optional `[--flag x]` brackets included."""
    flags: dict[tuple[str, ...], set[str]] = {}
    for command in documented_commands(ROOT):
        text = re.sub(r"^(?:\w+=\S*\s+)*", "", command.text)  # FOO=1 kvperf … → kvperf …
        words = shlex.split(re.sub(r"\$\([^)]*\)", "X", text).replace("[", " ").replace("]", " "))
        path = _path_of(words[1:])
        flags.setdefault(path, set()).update(
            w.split("=")[0] for w in words[1:] if re.match(r"--?[a-z]", w))
    return flags


DOCUMENTED = documented_flags()

# Descriptions with a percent sign, as a user must read them (argparse %-formats a
# description only when it holds `%(prog)`: an escaped `%%` there is printed doubled).
PERCENT_TEXTS = {
    ("compare-results",): ["ratio with 95% CI", "the % change against --water-line"],
    ("noise",): ["3% or 10% change (90% chance"],
    ("history",): ["the % change per metric"],
    ("report",): ["ratios with 95% CIs"],
    (): ["runs needed to flag 3% and 10% changes"],  # noise's line in the command list
}


def test_the_walk_finds_nested_subcommands() -> None:
    assert ("db", "push") in PATHS and ("track", "claim") in PATHS and ("run",) in PATHS
    assert len(PATHS) > 15


def test_the_documented_flags_are_found_per_subcommand() -> None:
    assert set(DOCUMENTED) <= set(PATHS), set(DOCUMENTED) - set(PATHS)
    assert {"--runner", "--lease"} <= DOCUMENTED[("track", "claim")]
    assert {"--state", "--sha", "--json"} <= DOCUMENTED[("track", "query")]  # [bracketed]
    assert {"--fail-on-regression", "--schedule", "--repo"} <= DOCUMENTED[("compare",)]
    assert "-o" in DOCUMENTED[("report",)] and "--commit" in DOCUMENTED[("run",)]  # $(…) arg
    assert sum(map(len, DOCUMENTED.values())) > 80


def _help(path: tuple[str, ...]) -> str:
    """In this process (main(), as the console script runs it; an interpreter start per
    subcommand cost ~2-3 s each), argparse wrapping at COLUMNS=100."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COLUMNS", "100")
        done = run_main(*path, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: kvperf"), done.stdout[:200]
    assert "Traceback" not in done.stderr + done.stdout
    return done.stdout


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "kvperf" for p in PATHS])
def test_help_runs_and_reads_as_written(path: tuple[str, ...]) -> None:
    text = _help(path)
    escapes = [line for line in text.splitlines() if "%%" in line or "%(" in line]
    assert not escapes, "format escapes printed literally:\n" + "\n".join(escapes)
    joined = " ".join(text.split())  # argparse wraps at COLUMNS
    missing = [phrase for phrase in PERCENT_TEXTS.get(path, []) if phrase not in joined]
    assert not missing, f"help of {' '.join(path)} lacks {missing}:\n{text}"
    options = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", text))
    undocumented_in_help = sorted(DOCUMENTED.get(path, set()) - options)
    assert not undocumented_in_help, (
        f"flags the docs give `kvperf {' '.join(path)}` that its --help does not show: "
        f"{undocumented_in_help}")


def test_kvload_help() -> None:
    done = subprocess.run([require_binary("kvload"), "--help"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert "Usage: kvload" in done.stdout and "--independent-keys" in done.stdout


def test_kvload_memtier_help() -> None:
    done = subprocess.run([require_binary("kvload"), "memtier", "--help"], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "memtier_benchmark-compatible" in done.stdout and "--ratio" in done.stdout
