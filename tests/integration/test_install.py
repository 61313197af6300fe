"""One install: `pip install .` builds kvload (and kvflame) beside kvperf, and `kvperf run`
then uses kvload.

The repository's files (tracked and new, none of its build products) are brought into one
directory of the test cache, so the build starts from what a clone holds: a file whose bytes
are unchanged keeps its old copy (and mtime), every other file is removed. The wheel is built
once per module, with pip's normal isolation (the pinned [build-system] requires), exactly the
wheel `pip install .` builds and installs; one test reads it, the other installs it into a
fresh venv. cargo reuses a target dir in the test cache and sees the same source paths and
mtimes, so only a change to the Rust sources pays for the release build again (fat LTO:
~40 s of a busy machine's time; a temp dir per run paid it every run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.valkey_repo import _locked as locked
from tests.fixtures.valkey_repo import cache_dir
from tests.helpers import ROOT, read_metrics

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(1200)]

PIP = ("-m", "pip", "--disable-pip-version-check", "--no-input")


def _cargo_dir() -> str:
    """The directory of the machine's cargo (rustup's ~/.cargo/bin when not on PATH)."""
    cargo = shutil.which("cargo") or shutil.which("cargo", path=str(Path.home() / ".cargo/bin"))
    assert cargo, "cargo is not installed: install Rust (rustup), which kvload's build needs"
    return str(Path(cargo).parent)


def _build_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([_cargo_dir(), env.get("PATH", "")])
    env["CARGO_TARGET_DIR"] = str(cache_dir() / "kvload-target")
    return env


def _run(args: list[str | Path], cwd: Path, env: dict[str, str],
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def _sync_source(dest: Path) -> None:
    """``dest`` holds exactly the repository as a clone would have it, plus new files not yet
    committed: unchanged files are left as they are, changed ones copied, others removed."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    wanted = {name for name in listed if name and (ROOT / name).is_file()}
    for path in sorted(dest.rglob("*"), reverse=True):  # files before their directories
        name = path.relative_to(dest).as_posix()
        if path.is_symlink() or (path.is_file() and name not in wanted):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for name in wanted:
        target = dest / name
        if not (target.is_file() and target.read_bytes() == (ROOT / name).read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from the clone (once for both tests), in the test cache's source
    directory (one test run at a time holds it)."""
    dist = tmp_path_factory.mktemp("dist")
    source = cache_dir() / "install-source"
    source.mkdir(exist_ok=True)
    with locked(cache_dir() / "install-source.lock"):
        _sync_source(source)
        _run([sys.executable, *PIP, "wheel", "-q", "--no-deps", "-w", dist, source], dist,
             _build_env())
    (built,) = dist.glob("kvperf-*.whl")
    return built


def _path_without_kvload() -> str:
    """PATH minus every directory holding a kvload: only the venv's can then be found."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "kvload").exists())


@pytest.mark.usefixtures("no_strays")
def test_pip_install_then_kvperf_run_uses_kvload(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, _build_env())
    _run([venv / "bin" / "python", *PIP, "install", "-q", wheel], tmp_path, _build_env())
    assert os.access(venv / "bin" / "kvload", os.X_OK)
    assert os.access(venv / "bin" / "kvflame", os.X_OK)  # --profile's flamegraph renderer
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = _path_without_kvload()
    env["KVPERF_QUICK"] = "1"  # which tool ran is the point here, not the numbers
    done = _run([venv / "bin" / "kvperf", "run"], scratch, env, timeout=300)
    rows = read_metrics(scratch / "results")
    assert rows, done.stdout
    for row in rows:
        assert (row["tool"], row["status"]) == ("kvload", "ok"), row
        assert row["rps"] > 0 and row["env"]["tool"].startswith("kvload ")


def test_wheel_contains_kvload(wheel: Path) -> None:
    scripts = "-".join(wheel.name.split("-")[:2]) + ".data/scripts/"
    with zipfile.ZipFile(wheel) as archive:
        infos = [archive.getinfo(scripts + name) for name in ("kvload", "kvflame")]
    for info in infos:
        assert info.file_size > 100_000, info.filename
        assert (info.external_attr >> 16) & 0o111, f"{info.filename} is not executable"
