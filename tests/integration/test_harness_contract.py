"""The shipped Python harnesses pass `clients/check_harness.py`, the contract checker a
harness author runs (clients/README.md), on the two checks they once failed: INCR counted as
INCR by the server (redis-py's ``incr`` sends ``INCRBY key 1``) and an unreachable server
ending the harness with exit 1 at once (redis.asyncio connects lazily, so every call failed
and was counted as an error until the spec's bound), plus an unknown model's exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvperf.clients.manifest import discover, shipped_dirs
from tests.helpers import ROOT, plain_valkey

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_strays")]

PYTHON_HARNESSES = ("redis-py", "redis-py-asyncio", "valkey-glide")


@pytest.mark.parametrize("name", PYTHON_HARNESSES)
def test_python_harness_counts_incr_as_incr_and_fails_fast_when_unreachable(
        name: str) -> None:
    manifest = discover(shipped_dirs())[name]
    assert manifest.installed, f"{name}: scripts/test runs kvperf clients install --all"
    with plain_valkey() as (_, port):
        done = subprocess.run(
            [sys.executable, str(ROOT / "clients" / "check_harness.py"),
             "--manifest", str(manifest.folder / "manifest.json"),
             "--install-dir", str(manifest.install_dir), "--port", str(port),
             "--only", "failures", "single-incr-seq"],
            capture_output=True, text=True, timeout=240, check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(line.startswith("PASS single-incr-seq c-commandstats") for line in lines), lines
    assert any(line.startswith("PASS unreachable exit-1") for line in lines), lines
