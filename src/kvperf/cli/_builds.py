"""Shared by `run`, `compare` and `noise`: build flags, building refs with progress."""

from __future__ import annotations

import argparse
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.cli._paths import local_path
from kvperf.core.errors import UsageError
from kvperf.sourcebuild.builder import DEFAULT_MAKE_ARGS, Build, Builder, default_cache


def add_build_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("builds")
    g.add_argument("--repo", help="git repository (path or URL) the refs are built from "
                                  "(default: the current directory when it is a git repo)")
    g.add_argument("--make-args", default=" ".join(DEFAULT_MAKE_ARGS),
                   help=f"arguments of make (default: {' '.join(DEFAULT_MAKE_ARGS)!r})")
    g.add_argument("--build-jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument("--build-cache", type=local_path,
                   help="mirrors, worktrees and builds (default: $KVPERF_BUILD_CACHE, "
                        "else ~/.cache/kvperf)")


@dataclass(frozen=True)
class BuildFlags:
    repo: str
    make_args: tuple[str, ...]
    jobs: int | None
    cache: Path


def build_flags(args: argparse.Namespace) -> BuildFlags:
    """Validated build flags (UsageError on bad values)."""
    repo = args.repo
    if repo is None:
        if not Path(".git").exists():
            raise UsageError("building refs needs --repo (a git repository path or URL); the "
                             "current directory is not a git repository")
        repo = "."
    try:
        make_args = tuple(shlex.split(args.make_args))
    except ValueError as exc:
        raise UsageError(f"--make-args {args.make_args!r}: {exc}") from None
    if args.build_jobs is not None and args.build_jobs < 1:
        raise UsageError(f"--build-jobs must be at least 1, got {args.build_jobs}")
    env_cache = os.environ.get("KVPERF_BUILD_CACHE")
    cache = args.build_cache or (Path(env_cache) if env_cache else default_cache())
    return BuildFlags(repo, make_args, args.build_jobs, cache)


def build_refs(flags: BuildFlags, refs: list[str], console: Console) -> list[Build]:
    """Resolve every ref first (bad refs → exit 2 before any build), then build each."""
    builder = Builder(flags.cache, flags.repo, flags.make_args, flags.jobs)
    with console.status(f"fetching {flags.repo}"):
        shas = [builder.resolve(ref) for ref in refs]
    builds: dict[str, Build] = {}
    for ref, sha in zip(refs, shas, strict=True):
        if sha not in builds:
            builds[sha] = build_one(builder, ref, sha, console)
    return [builds[sha] for sha in shas]


def build_one(builder: Builder, ref: str, sha: str, console: Console) -> Build:
    what = f"{escape(ref)} ({sha[:12]})"
    if builder.cached(sha):
        console.print(f"build of {what}: cached")
        return builder.build(ref, sha)
    make = " ".join(["make", f"-j{builder.jobs}", *builder.make_args])
    with console.status(f"building {what}: {escape(make)}") as status:
        def progress(line: str) -> None:
            status.update(f"building {what}: {escape(line.strip()[:100])}")
        build = builder.build(ref, sha, progress)
    if build.ok:
        console.print(f"build of {what}: {build.seconds:.0f} s (log: {build.log})")
    else:
        console.print(f"[red]build of {what} failed[/red] after {build.seconds:.0f} s: "
                      f"{escape(build.error or '')}", soft_wrap=True)
    return build
