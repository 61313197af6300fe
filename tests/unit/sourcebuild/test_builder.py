"""The build cache: (sha, make args) keys, reuse, failures with the compiler's error."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.sourcebuild.builder import Builder, build_source_tree, failure_message
from tests.unit.sourcebuild.toy_repo import git, make_toy_repo


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return make_toy_repo(tmp_path / "toy")


def _make_calls(cache: Path) -> list[str]:
    calls = cache / "builds" / "make-calls.txt"
    return calls.read_text().splitlines() if calls.exists() else []


def test_a_built_commit_is_reused_without_make(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    builder = Builder(cache, str(toy), ("FLAVOR=a",), jobs=1)
    sha = builder.resolve("v1")
    first = builder.build("v1", sha)
    assert first.ok and not first.cached and first.sha == sha
    assert first.server_bin is not None and first.server_bin.is_file()
    again = Builder(cache, str(toy), ("FLAVOR=a",), jobs=1).build("v1", sha)
    assert again.cached and again.server_bin == first.server_bin
    assert _make_calls(cache) == ["building with FLAVOR=a"]


def test_other_make_args_are_another_build(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a = Builder(cache, str(toy), ("FLAVOR=a",), jobs=1)
    b = Builder(cache, str(toy), ("FLAVOR=b",), jobs=1)
    sha = a.resolve("v1")
    assert a.build("v1", sha).server_bin != b.build("v1", sha).server_bin
    assert _make_calls(cache) == ["building with FLAVOR=a", "building with FLAVOR=b"]


def test_a_failed_build_carries_the_compiler_error_and_is_not_cached(toy: Path,
                                                                     tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    builder = Builder(cache, str(toy), (), jobs=1)
    sha = builder.resolve("broken")
    build = builder.build("broken", sha)
    assert not build.ok and build.server_bin is None
    assert build.error and "error: BROKEN" in build.error and sha[:12] in build.error
    assert build.log is not None and "error: BROKEN" in build.log.read_text()
    assert builder.cached(sha) is None


def test_progress_lines_reach_the_callback(toy: Path, tmp_path: Path) -> None:
    builder = Builder(tmp_path / "cache", str(toy), (), jobs=1)
    lines: list[str] = []
    builder.build("v2", builder.resolve("v2"), lines.append)
    assert "compiling server.c" in lines


def test_source_tree_is_built_in_place_once(toy: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git(toy, "worktree", "add", "-q", "--detach", str(tree), "v1")
    first = build_source_tree(tree, tmp_path / "cache", (), 1)
    assert first.ok and not first.cached and first.server_bin == tree / "src" / "valkey-server"
    assert build_source_tree(tree, tmp_path / "cache", (), 1).cached


def test_not_a_source_tree(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a Valkey source tree"):
        build_source_tree(tmp_path, tmp_path / "cache")


def test_failure_message_puts_error_lines_first(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("cc a.c\nt_string.c:360:5: error: expected ';'\nmore\n" + "x\n" * 30)
    message = failure_message("build of X", 2, log)
    assert message.splitlines()[1] == "t_string.c:360:5: error: expected ';'"
    assert "make exit 2" in message and message.endswith("x")
