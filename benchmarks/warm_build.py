#!/usr/bin/env python3
"""A new commit's build: warm start (sourcebuild/warm.py) vs cold with a warm ccache.

Makes 2×N fresh commits on top of the fixture's `base` (each changes the spin count in
setCommand: one .c file, like a typical patch), then builds them alternately with and
without warm start in one build cache whose ccache already holds the fixture's builds, and
prints each build's wall time and the median ratio warm/cold. The builds made here are
deleted afterwards; the fixture's own builds are left alone.

Usage: .venv/bin/python benchmarks/warm_build.py [--pairs 2] [--cache DIR]
(default cache: the tests' build cache, where the fixture is usually built already)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fixtures.valkey_repo import cache_dir, fixture_repo

from kvperf.sourcebuild.builder import Builder


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=bench",
                           "-c", "user.email=bench@localhost", *args],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _commit(repo: Path, spin: int) -> str:
    source = repo / "src" / "t_string.c"
    text = source.read_text()
    start = text.index("kvperf_set_spin = ") + len("kvperf_set_spin = ")
    end = text.index(";", start)
    source.write_text(text[:start] + str(spin) + text[end:])
    _git(repo, "commit", "--quiet", "-am", f"bench spin {spin} {time.time_ns()}")
    return _git(repo, "rev-parse", "HEAD")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args()
    cache = args.cache or cache_dir() / "build-cache"
    fixture = fixture_repo()
    base = Builder(cache, str(fixture))
    if not base.build("base", base.resolve("base")).ok:
        print("the fixture's base does not build", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="kvperf-warm-bench-"))
    repo = work / "repo"
    subprocess.run(["git", "clone", "--quiet", str(fixture), str(repo)], check=True)
    _git(repo, "checkout", "--quiet", "-b", "bench", "base")  # on a branch: fetched
    times: dict[str, list[float]] = {"warm": [], "cold": []}
    made: list[tuple[Builder, str]] = []
    try:
        for pair in range(args.pairs):
            kinds = ("warm", "cold") if pair % 2 == 0 else ("cold", "warm")
            for kind in kinds:
                sha = _commit(repo, 1000 + len(made))
                builder = Builder(cache, str(repo), warm_start=kind == "warm")
                made.append((builder, sha))
                started = time.monotonic()
                build = builder.build(kind, sha)
                seconds = time.monotonic() - started
                if not build.ok:
                    print(f"{kind} build failed: {build.error}", file=sys.stderr)
                    return 1
                times[kind].append(seconds)
                print(f"pair {pair + 1} {kind:4} {sha[:12]} {seconds:7.1f} s", flush=True)
    finally:
        for builder, sha in made:
            shutil.rmtree(builder.tree(sha), ignore_errors=True)
        if made:
            shutil.rmtree(made[0][0].mirror(), ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    warm, cold = statistics.median(times["warm"]), statistics.median(times["cold"])
    print(f"median warm start {warm:.1f} s, cold (warm ccache) {cold:.1f} s, "
          f"ratio {warm / cold:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
