"""Warm start of a new commit from the closest finished build (sourcebuild/warm.py).

The repository is a stand-in (named so) whose Makefile "compiles" by copying, with real
make and its mtime rules, so what make rebuilds is exactly what a real build would; the
real Valkey case is tests/integration/test_builds.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kvperf.sourcebuild.builder import Builder
from tests.unit.sourcebuild.toy_repo import git

MAKEFILE = """\
all: src/valkey-server
src/%.o: src/%.c
\t@echo compiling $<
\t@cp $< $@
src/valkey-server: src/a.o src/b.o
\t@echo linking
\t@printf '#!/bin/sh\\necho "Valkey server v=%s"\\n' "$$(cat src/a.o src/b.o | tr -d '\\n')" > $@
\t@chmod +x $@
"""


def _repo(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "deps").mkdir()
    (path / "Makefile").write_text(MAKEFILE)
    (path / "src" / "Makefile").write_text("# stand-in\n")
    (path / "deps" / "README").write_text("deps v1\n")
    git(path, "init", "-q", "-b", "main")
    for tag, changes in (("v1", {"src/a.c": "1", "src/b.c": "1"}), ("v2", {"src/b.c": "2"}),
                         ("v3", {"deps/README": "deps v2\n", "src/b.c": "3"})):
        for name, text in changes.items():
            (path / name).write_text(text)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", tag)
        git(path, "tag", tag)
    return path


def _version(binary: Path | None) -> str:
    assert binary is not None
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout


def test_a_commit_next_to_a_build_recompiles_only_its_change(tmp_path: Path) -> None:
    builder = Builder(tmp_path / "cache", str(_repo(tmp_path / "repo")), jobs=1)
    v1, v2 = builder.resolve("v1"), builder.resolve("v2")
    assert builder.build("v1", v1).ok
    second = builder.build("v2", v2)
    assert second.ok, second.error
    assert _version(second.server_bin).strip() == "Valkey server v=12"
    log = (builder.tree(v2) / "kvperf-build.log").read_text()
    assert f"warm start from the build of {v1[:12]}" in log
    assert "compiling src/b.c" in log and "compiling src/a.c" not in log
    marker = json.loads((builder.tree(v2) / ".kvperf-build.json").read_text())
    assert marker["warm_from"] == v1
    assert _version(builder.cached(v1)).strip() == "Valkey server v=11"  # donor untouched


def test_other_deps_mean_a_cold_build(tmp_path: Path) -> None:
    builder = Builder(tmp_path / "cache", str(_repo(tmp_path / "repo")), jobs=1)
    assert builder.build("v1", builder.resolve("v1")).ok
    v3 = builder.resolve("v3")
    third = builder.build("v3", v3)
    assert third.ok and _version(third.server_bin).strip() == "Valkey server v=13"
    log = (builder.tree(v3) / "kvperf-build.log").read_text()
    assert "warm start" not in log and "compiling src/a.c" in log
    marker = json.loads((builder.tree(v3) / ".kvperf-build.json").read_text())
    assert marker["warm_from"] is None
