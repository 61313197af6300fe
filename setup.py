"""Build hook only: all metadata, and the kvload RustBin, live in pyproject.toml.

setuptools-rust builds kvload (crates/kvload) with the machine's cargo. Without cargo on PATH
its own error talks about rustc and prebuilt wheels; this says what to do instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import PlatformError
from setuptools_rust import build_rust

HARNESSES = Path(__file__).resolve().parent / "clients"


class BuildRustWithCargo(build_rust):
    """build_rust that first checks that cargo can be found."""

    def run(self) -> None:
        cargo = os.environ.get("CARGO", "cargo")
        if not shutil.which(cargo):
            raise PlatformError(
                f"kvperf: cargo ({cargo!r}) is not on PATH. kvperf's load generator kvload "
                "(crates/kvload) is built from source with cargo: install Rust and cargo "
                "(rustup puts them in ~/.cargo/bin), put them on PATH "
                '(export PATH="$HOME/.cargo/bin:$PATH") and run pip install again.')
        super().run()


class BuildPyWithHarnesses(build_py):
    """build_py that also ships the client harnesses (clients/<language>/<name>/) as
    package data, kvperf/harnesses/, for `pip install .` and wheels; an editable install
    reads them from the source tree (src/kvperf/clients/manifest.py: shipped_dirs)."""

    def run(self) -> None:
        super().run()
        if HARNESSES.is_dir() and not getattr(self, "editable_mode", False):
            shutil.copytree(HARNESSES, Path(self.build_lib) / "kvperf" / "harnesses",
                            dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_rust": BuildRustWithCargo, "build_py": BuildPyWithHarnesses})
