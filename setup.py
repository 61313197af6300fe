"""Build hook only: all metadata, and the kvload RustBin, live in pyproject.toml.

setuptools-rust builds kvload (crates/kvload) with the machine's cargo. Without cargo on PATH
its own error talks about rustc and prebuilt wheels; this says what to do instead.
"""

from __future__ import annotations

import os
import shutil

from setuptools import setup
from setuptools.errors import PlatformError
from setuptools_rust import build_rust


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


setup(cmdclass={"build_rust": BuildRustWithCargo})
