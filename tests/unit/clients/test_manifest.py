"""Manifests: the shipped ones load, placeholders expand, stamps decide "installed", and
every mistake names the key (clients/manifest.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from kvperf.clients.checkout import repo_for
from kvperf.clients.manifest import (
    CACHE_ENV,
    discover,
    parse_manifest,
    select,
    shipped_dirs,
    split_key,
    split_ref,
)
from kvperf.core.errors import ConfigError, UsageError

GOOD: dict[str, Any] = {
    "name": "mine", "language": "python", "library": "lib", "version": "1.0",
    "summary": "s", "install": [["{python}", "-m", "venv", "{install}/venv"]],
    "run": ["{install}/venv/bin/python", "{src}/h.py"], "env": {"X": "{cache}/x"}}


def _write(root: Path, data: dict[str, Any], language: str = "python") -> Path:
    folder = root / language / data["name"]
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(data))
    return folder


def test_the_shipped_python_harnesses_load() -> None:
    known = discover(shipped_dirs())
    assert {"redis-py", "redis-py-asyncio", "valkey-glide"} <= set(known)
    for manifest in known.values():
        assert (manifest.folder / "manifest.json").is_file()


def test_placeholders_expand_and_the_stamp_decides_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder = _write(tmp_path, GOOD)
    (manifest,) = discover([tmp_path]).values()
    assert manifest.expand(manifest.install[0]) == (
        sys.executable, "-m", "venv", f"{manifest.install_dir}/venv")
    assert manifest.install_dir.name == f"mine-{manifest.digest[:12]}"
    assert manifest.expand(manifest.run)[1] == f"{folder.resolve()}/h.py"
    assert manifest.environment({})["X"] == f"{tmp_path}/cache/x"
    assert not manifest.installed
    manifest.install_dir.mkdir(parents=True)
    manifest.stamp.write_text("another hash\n")
    assert not manifest.installed
    manifest.stamp.write_text(manifest.digest + "\n")
    assert manifest.installed


@pytest.mark.parametrize(("change", "message"), [
    ({"name": "Bad Name"}, "name 'Bad Name'"),
    ({"language": "cobol"}, "language 'cobol'"),
    ({"run": []}, "run must be a non-empty list"),
    ({"install": [["{nope}"]]}, "install[0]: unknown placeholder {nope}"),
    ({"extra": 1}, "unknown key 'extra'"),
    ({"version": ""}, "'version' must be a non-empty string"),
    ({"models": ["single", "threads"]}, "models: 'threads' is not a concurrency model"),
    ({"models": "single"}, "'models' must be a list of distinct model names"),
    ({"models": ["pool", "pool"]}, "'models' must be a list of distinct model names"),
])
def test_a_bad_manifest_names_the_key(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("{", r"\{")):
        parse_manifest(json.dumps({**GOOD, **change}).encode(), Path("."))


def test_a_name_used_twice_and_an_unknown_name_are_refused(tmp_path: Path) -> None:
    _write(tmp_path / "a", GOOD)
    _write(tmp_path / "b", GOOD, "go")
    with pytest.raises(ConfigError, match="'mine' is also used by"):
        discover([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(UsageError, match="unknown client 'other'; known clients: mine"):
        select(discover([tmp_path / "a"]), ["other"])
    with pytest.raises(ConfigError, match="does not exist"):
        discover([tmp_path / "missing"])


def test_a_changed_harness_source_gets_a_fresh_install_directory(tmp_path: Path) -> None:
    """Go, Java and C harnesses are compiled at install time from their folder and the
    shared code beside it: an edit there must not leave the old build installed."""
    folder = _write(tmp_path, GOOD)
    (folder / "h.py").write_text("print(1)\n")
    (folder.parent / "kit.py").write_text("SHARED = 1\n")
    (before,) = discover([tmp_path]).values()
    (folder.parent / "kit.py").write_text("SHARED = 2\n")
    (after_kit,) = discover([tmp_path]).values()
    (folder / "h.py").write_text("print(2)\n")
    (after_harness,) = discover([tmp_path]).values()
    assert len({before.install_dir, after_kit.install_dir, after_harness.install_dir}) == 3
    (again,) = discover([tmp_path]).values()
    assert again.install_dir == after_harness.install_dir


@pytest.mark.parametrize(("text", "expected"), [
    ("redis-py", ("redis-py", None, None)),
    ("redis-py:pool", ("redis-py", None, "pool")),
    ("redis-py@main", ("redis-py", "main", None)),
    ("redis-py@feature/x:single", ("redis-py", "feature/x", "single")),
    ("go-redis@v9.23.0", ("go-redis", "v9.23.0", None)),
])
def test_a_client_key_splits_into_name_ref_and_model(text: str, expected: tuple[Any, ...]
                                                     ) -> None:
    named, model = split_key(text)
    name, ref = split_ref(named)
    assert (name, ref, model and model.value) == expected


def test_a_checkout_section_parses_and_its_placeholders_stay_in_it() -> None:
    section = {"install": [["{release}/venv/bin/python", "{checkout}"]],
               "env": {"PYTHONPATH": "{checkout}"}}
    manifest = parse_manifest(json.dumps({**GOOD, "checkout": section}).encode(), Path("."))
    assert manifest.checkout is not None and manifest.checkout.run is None
    assert manifest.checkout.env == (("PYTHONPATH", "{checkout}"),)
    for change, message in (
            ({"install": [["{checkout}"]]}, "install[0]: unknown placeholder {checkout}"),
            ({"checkout": {"build": []}}, "checkout: unknown key 'build'"),
            ({"checkout": []}, "'checkout' must be an object"),
            ({"checkout": {"run": ["{nope}"]}}, "checkout.run: unknown placeholder {nope}")):
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_manifest(json.dumps({**GOOD, **change}).encode(), Path("."))


@pytest.mark.parametrize(("repos", "name", "expected"), [
    (["/src/redis-py"], "redis-py", "/src/redis-py"),
    (["go-redis=/src/go", "redis-py=/src/py"], "redis-py", "/src/py"),
    (["go-redis=/src/go", "https://h/redis-py.git"], "redis-py", "https://h/redis-py.git"),
])
def test_the_repository_of_a_client_at_a_commit(repos: list[str], name: str,
                                                 expected: str) -> None:
    assert repo_for(name, repos) == expected


def test_a_client_at_a_commit_without_its_repository_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="needs the library's repository"):
        repo_for("redis-py", ["go-redis=/src/go"])
    with pytest.raises(UsageError, match="without NAME="):
        repo_for("redis-py", ["/a", "/b"])
    with pytest.raises(UsageError, match="a ref is missing"):
        split_ref("redis-py@")
