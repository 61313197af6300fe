"""Warm start: a new commit's worktree begins as a copy of the closest finished build.

make decides what to rebuild from mtimes. In a fresh worktree every file is new, so make
rebuilds everything: ccache makes the compiles cheap, but jemalloc's configure and the
links are not cached (minutes here). Instead:

1. check out the donor's commit and age every tracked file to ``OLD_MTIME``;
2. copy the donor's untracked files (objects, configured deps, generated headers) with
   their own, newer, mtimes — make now sees the donor's build as up to date;
3. check out the target commit: git rewrites only the files that differ, with a fresh
   mtime, so make rebuilds exactly what depends on them.

Valkey's Makefile builds deps/ once and never notices later changes to it, so a donor must
have the same ``deps`` tree and the same Makefiles as the target; otherwise the build is
cold. Any failure here falls back to a cold worktree.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import GitError
from kvperf.core.git import git

OLD_MTIME = 946_684_800  # 2000-01-01: older than any build product
MUST_MATCH = ("deps", "Makefile", "src/Makefile")
MAX_CANDIDATES = 40


@dataclass(frozen=True)
class Donor:
    sha: str
    tree: Path
    changed: int  # files that differ from the target


def _objects(mirror: Path, sha: str) -> list[str] | None:
    try:
        out = git("--git-dir", str(mirror), "rev-parse",
                  *(f"{sha}:{path}" for path in MUST_MATCH))  # sha is hex: not an option
    except GitError:
        return None
    return out.split()


def pick_donor(mirror: Path, sha: str, candidates: Iterable[tuple[str, Path]]) -> Donor | None:
    """The finished build closest to ``sha`` (fewest differing files) that shares its deps
    and Makefiles, or None."""
    wanted = _objects(mirror, sha)
    if wanted is None:
        return None
    best: Donor | None = None
    for donor_sha, tree in list(candidates)[:MAX_CANDIDATES]:
        if donor_sha == sha or _objects(mirror, donor_sha) != wanted:
            continue
        try:
            out = git("--git-dir", str(mirror), "diff", "--name-only", donor_sha, sha)
        except GitError:
            continue
        changed = len(out.splitlines())
        if best is None or changed < best.changed:
            best = Donor(donor_sha, tree, changed)
    return best


def _age_tracked(tree: Path) -> None:
    for name in filter(None, git("ls-files", "-z", cwd=tree).split("\0")):
        path = tree / name
        if path.is_file() and not path.is_symlink():
            os.utime(path, (OLD_MTIME, OLD_MTIME))
    # The index must learn the new mtimes, or checkout treats every file as modified and
    # rewrites it (making it new again).
    git("update-index", "-q", "--refresh", cwd=tree)


def _copy_untracked(donor: Path, tree: Path, skip: set[str]) -> int:
    copied = 0
    for name in filter(None, git("ls-files", "-z", "--others", cwd=donor).split("\0")):
        if name in skip:
            continue
        source, dest = donor / name, tree / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            dest.unlink(missing_ok=True)
            dest.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, dest)  # keeps the mtime: make sees it as built
        copied += 1
    return copied


def seed_worktree(tree: Path, donor: Donor, sha: str, skip: set[str]) -> int:
    """Turn ``tree`` (a worktree checked out at the donor's commit) into the donor's build,
    then move it to ``sha``. Returns the number of build files copied. Raises OSError or
    GitError."""
    _age_tracked(tree)
    copied = _copy_untracked(donor.tree, tree, skip)
    git("checkout", "--quiet", "--detach", sha, cwd=tree)
    return copied
