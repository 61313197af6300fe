"""Reproducible installs (issue 37, item 6): every Python harness installs from a
requirements file whose every requirement is pinned with its files' sha256
(``--require-hashes``), every Node.js harness with ``npm ci`` from a package-lock.json that
holds integrity hashes and no URL; a changed requirements or lock file changes the
install directory (the manifest's hash covers its language folder)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kvperf.clients.manifest import Manifest, discover, load_manifest, shipped_dirs

_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[^\s;]+(\s*;[^\\]+)?$")
_HASH = re.compile(r"^--hash=sha256:[0-9a-f]{64}$")


def _harnesses(language: str) -> list[Manifest]:
    found = [m for m in discover(shipped_dirs()).values() if m.language == language]
    assert found, f"no {language} harness found"
    return found


def requirement_problems(text: str) -> list[str]:
    """What keeps a requirements file from a fully hashed install: a requirement without
    an exact pin or without a sha256, an option line (index, find-links), a URL."""
    problems = [f"a URL: {line.strip()}" for line in text.splitlines() if "://" in line]
    logical = re.sub(r"\\\n", " ", "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")))
    for line in filter(None, (line.strip() for line in logical.splitlines())):
        words = line.split(" --hash=")
        requirement = words[0].strip()
        if requirement.startswith("-"):
            problems.append(f"an option line: {requirement}")
        elif not _PIN.match(requirement):
            problems.append(f"not pinned with ==: {requirement}")
        elif len(words) < 2 or not all(_HASH.match("--hash=" + w.strip()) for w in words[1:]):
            problems.append(f"no sha256 hash: {requirement}")
    return problems


def lock_problems(package: Mapping[str, Any], lock: Mapping[str, Any]) -> list[str]:
    """What keeps a package-lock.json from a locked install without registry URLs: an
    entry without integrity or with a ``resolved`` field, a top-level version that is not
    exact or not the lock's."""
    problems = []
    text = json.dumps(lock)
    if "://" in text:
        problems.append("holds a URL")
    wanted = package.get("dependencies")
    assert isinstance(wanted, dict)
    packages = lock.get("packages")
    assert isinstance(packages, dict)
    root = packages.get("", {})
    if root.get("dependencies") != wanted:
        problems.append(f"its root's dependencies {root.get('dependencies')} are not "
                        f"package.json's {wanted}")
    for name, version in wanted.items():
        if not re.fullmatch(r"\d+\.\d+\.\d+", version):
            problems.append(f"{name}: {version!r} is not an exact version")
    for path, entry in packages.items():
        if path and "resolved" in entry:
            problems.append(f"{path}: has a resolved field")
        if path and not entry.get("link") and not str(entry.get("integrity", "")).startswith(
                "sha512-"):
            problems.append(f"{path}: no sha512 integrity")
    return problems


@pytest.mark.parametrize("manifest", _harnesses("python"), ids=lambda m: m.name)
def test_each_python_harness_installs_fully_hashed(manifest: Manifest) -> None:
    requirements = manifest.folder / "requirements.txt"
    assert requirements.is_file(), f"{manifest.name}: no requirements.txt"
    assert requirement_problems(requirements.read_text()) == []
    (pip,) = [step for step in manifest.install if "pip" in step]
    assert {"--require-hashes", "--only-binary"} <= set(pip)
    assert pip[pip.index("-r") + 1] == "{src}/requirements.txt"
    assert not [w for w in pip if "==" in w], "pins belong in requirements.txt"


@pytest.mark.parametrize("manifest", _harnesses("node"), ids=lambda m: m.name)
def test_each_node_harness_installs_from_its_lock(manifest: Manifest) -> None:
    lock_file = manifest.folder / "package-lock.json"
    assert lock_file.is_file(), f"{manifest.name}: no package-lock.json"
    package = json.loads((manifest.folder / "package.json").read_text())
    assert lock_problems(package, json.loads(lock_file.read_text())) == []
    assert [step[:2] for step in manifest.install] == [("cp", "{src}/package.json"),
                                                       ("npm", "ci")]


def test_requirement_problems_names_each_gap() -> None:
    good = "# c\nredis==8.1.0 \\\n    --hash=sha256:" + "a" * 64 + "\n"
    assert requirement_problems(good) == []
    marker = "x==1 ; python_version < '3.12' \\\n    --hash=sha256:" + "b" * 64 + "\n"
    assert requirement_problems(marker) == []
    assert requirement_problems("redis==8.1.0\n") == ["no sha256 hash: redis==8.1.0"]
    assert requirement_problems("redis>=8 --hash=sha256:" + "a" * 64) == [
        "not pinned with ==: redis>=8"]
    assert requirement_problems("--index-url x\n") == ["an option line: --index-url x"]
    assert requirement_problems("# see https://x\n") == ["a URL: # see https://x"]


def test_lock_problems_names_each_gap() -> None:
    package = {"dependencies": {"a": "1.0.0"}}
    good = {"packages": {"": {"dependencies": {"a": "1.0.0"}},
                         "node_modules/a": {"version": "1.0.0", "integrity": "sha512-x"}}}
    assert lock_problems(package, good) == []
    bad = {"packages": {"": {"dependencies": {"a": "^1.0.0"}},
                        "node_modules/a": {"version": "1.0.0", "resolved": "https://h/a.tgz"}}}
    assert lock_problems({"dependencies": {"a": "^1.0.0"}}, bad) == [
        "holds a URL", "a: '^1.0.0' is not an exact version",
        "node_modules/a: has a resolved field", "node_modules/a: no sha512 integrity"]
    assert "are not package.json's" in lock_problems({"dependencies": {"a": "2.0.0"}},
                                                     good)[0]


@pytest.mark.parametrize(("name", "lock"), [("redis-py", "requirements.txt"),
                                            ("ioredis", "package-lock.json")])
def test_a_changed_lock_changes_the_install_directory(tmp_path: Path, name: str,
                                                      lock: str) -> None:
    shipped = discover(shipped_dirs())[name]
    language = shutil.copytree(shipped.folder.parent, tmp_path / shipped.language)
    path = language / name / "manifest.json"
    before = load_manifest(path)
    assert before.digest == shipped.digest
    with (language / name / lock).open("a") as file:
        file.write("\n")
    after = load_manifest(path)
    assert after.install_dir != before.install_dir
