"""Every help text of the real command lines: the whole argparse tree of kvperf (walked,
not listed by hand) and kvload. Exit 0, the usage line, no traceback."""

from __future__ import annotations

import argparse
import subprocess

import pytest

from kvperf.cli.main import build_parser
from tests.helpers import require_binary, run_kvperf


def _subcommand_paths(parser: argparse.ArgumentParser,
                      prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += _subcommand_paths(sub, (*prefix, name))
    return paths


PATHS = _subcommand_paths(build_parser())


def test_the_walk_finds_nested_subcommands() -> None:
    assert ("db", "push") in PATHS and ("track", "claim") in PATHS and ("run",) in PATHS
    assert len(PATHS) > 15


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "kvperf" for p in PATHS])
def test_help_runs(path: tuple[str, ...]) -> None:
    done = run_kvperf(*path, "--help", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: kvperf"), done.stdout[:200]
    assert "Traceback" not in done.stderr + done.stdout


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
