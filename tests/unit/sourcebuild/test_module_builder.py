"""Module builds: the recipe detected from the tree or given, placeholders, the artifact
glob, the (commit, recipe) cache, failures with the compiler's first error. A toy module
repository whose Makefile compiles a real shared object with cc in a second; real modules
(valkey-bloom with cargo) are built in tests/integration/test_module_builds.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.sourcebuild.module_builder import (
    ModuleBuilder,
    detect_recipe,
    fill,
    find_artifact,
)
from tests.unit.sourcebuild.toy_repo import git

MAKEFILE = """\
all:
\t@echo build >> ../module-make-calls.txt
\tcc -shared -fPIC -o toy.so toy.c
"""


def make_module_repo(path: Path) -> Path:
    """Commits: v1, v2 (tags), broken (a C error), bare (no recipe: README only)."""
    path.mkdir(parents=True)
    (path / "Makefile").write_text(MAKEFILE)
    git(path, "init", "-q", "-b", "main")
    for tag, body in (("v1", "int toy(void) { return 1; }\n"),
                      ("v2", "int toy(void) { return 2; }\n"),
                      ("broken", "int toy(void) { return undefined_kvperf; }\n")):
        (path / "toy.c").write_text(body)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {tag}")
        git(path, "tag", tag)
    git(path, "rm", "-q", "Makefile", "toy.c")
    (path / "README").write_text("no build here\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "no recipe")
    git(path, "tag", "bare")
    return path


@pytest.fixture
def module_repo(tmp_path: Path) -> Path:
    return make_module_repo(tmp_path / "mod")


def test_recipes_are_detected_in_order_and_can_be_given() -> None:
    assert detect_recipe({"Cargo.toml", "Makefile"}, None, None, "x").kind == "cargo"
    cmake = detect_recipe({"CMakeLists.txt", "Makefile"}, None, None, "x")
    assert cmake.kind == "cmake" and cmake.artifact == "build/**/*.so"
    assert detect_recipe({"Makefile"}, None, None, "x").command == "make -j{jobs}"
    given = detect_recipe({"Makefile"}, "make lib", "out/*.so", "x")
    assert (given.kind, given.command, given.artifact) == ("given", "make lib", "out/*.so")
    assert detect_recipe(set(), "sh build.sh", None, "x").artifact == "**/*.so"
    with pytest.raises(UsageError, match="no build recipe found"):
        detect_recipe({"README"}, None, None, "--module-repo r at bare")


def test_placeholders_are_filled_and_unknown_or_missing_ones_refused() -> None:
    values: dict[str, str | None] = {"server_src": "/v", "jobs": "2", "tree": "/t"}
    assert fill("cmake -DH={server_src}/src/valkeymodule.h -j{jobs} ${HOME}",
                values) == "cmake -DH=/v/src/valkeymodule.h -j2 ${HOME}"
    with pytest.raises(UsageError, match=r"unknown placeholder \{srv\}"):
        fill("make {srv}", values)
    with pytest.raises(UsageError, match="KVPERF_SERVER_SRC"):
        fill("make {server_src}", {**values, "server_src": None})


def test_the_artifact_glob_must_name_one_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.so").write_text("")
    assert find_artifact(tmp_path, "**/*.so") == tmp_path / "a" / "one.so"
    with pytest.raises(UsageError, match="matched no file"):
        find_artifact(tmp_path, "*.dylib")
    (tmp_path / "two.so").write_text("")
    with pytest.raises(UsageError, match="matched 2 files"):
        find_artifact(tmp_path, "**/*.so")


def test_a_module_commit_is_built_once_and_reused(module_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    builder = ModuleBuilder(cache, str(module_repo), jobs=1)
    sha = builder.resolve("v1")
    first = builder.build("v1", sha)
    assert first.ok and not first.cached and first.artifact is not None
    assert first.artifact.name == "toy.so" and first.recipe.kind == "make"
    again = ModuleBuilder(cache, str(module_repo), jobs=1).build("v1", sha)
    assert again.cached and again.artifact == first.artifact
    other = builder.build("v2", builder.resolve("v2"))
    assert other.ok and other.artifact != first.artifact
    calls = (cache / "module-builds" / "module-make-calls.txt").read_text().splitlines()
    assert len(calls) == 2  # v1 and v2 once each
    provenance = again.provenance("R")
    assert provenance["commit"] == sha and provenance["recipe"] == "make"


def test_a_failed_build_carries_the_compilers_first_error(module_repo: Path,
                                                           tmp_path: Path) -> None:
    builder = ModuleBuilder(tmp_path / "cache", str(module_repo), jobs=1)
    failed = builder.build("broken", builder.resolve("broken"))
    assert not failed.ok and failed.artifact is None
    assert failed.error is not None and "undefined_kvperf" in failed.error
    assert "error:" in failed.error.splitlines()[1]
    assert builder.cached(failed.sha, failed.recipe) is None  # failures are not cached


def test_bad_input_is_refused_before_any_build(module_repo: Path, tmp_path: Path) -> None:
    builder = ModuleBuilder(tmp_path / "cache", str(module_repo), jobs=1)
    with pytest.raises(UsageError, match="names no commit"):
        builder.resolve("no-such-ref")
    with pytest.raises(UsageError, match="no build recipe found"):
        builder.recipe("bare", builder.resolve("bare"))
    with pytest.raises(UsageError, match="server_src"):
        ModuleBuilder(tmp_path / "cache", str(module_repo), "make H={server_src}",
                      jobs=1).recipe("v1", builder.resolve("v1"))
    assert not (tmp_path / "cache" / "module-builds").exists()
    wrong = ModuleBuilder(tmp_path / "cache", str(module_repo), artifact="*.dylib", jobs=1)
    with pytest.raises(UsageError, match="matched no file"):
        wrong.build("v1", wrong.resolve("v1"))
