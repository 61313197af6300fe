"""The build flags of `run`, `compare`, `noise`, `bisect` and `regressions --bisect`,
declared once; pipeline/request/common.py checks them, pipeline/run/builds.py builds."""

from __future__ import annotations

import argparse

from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.vocabulary import DEFAULT_MAKE_ARGS
from kvperf.pipeline.request.common import BuildFlags


def add_build_args(p: argparse.ArgumentParser, repo: bool = True) -> None:
    """``repo``: whether the command takes --repo (`track run` builds from each job's)."""
    g = p.add_argument_group("builds")
    if repo:
        g.add_argument("--repo", help="git repository (path or URL) the refs are built from "
                                      "(default: the current directory when it is a git "
                                      "repo)")
    g.add_argument("--make-args", default=" ".join(DEFAULT_MAKE_ARGS),
                   help=f"arguments of make (default: {' '.join(DEFAULT_MAKE_ARGS)!r})")
    g.add_argument("--build-jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument("--build-cache", type=local_path,
                   help="mirrors, worktrees and builds (default: $KVPERF_BUILD_CACHE, "
                        "else ~/.cache/kvperf)")


def build_flags(args: argparse.Namespace) -> BuildFlags:
    return BuildFlags(args.repo, args.make_args, args.build_jobs, args.build_cache)
