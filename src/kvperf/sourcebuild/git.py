"""The build stage's git: a bare mirror per repository, ref → full sha, one worktree per
build (git itself runs through core/git.py).

Refs are passed to git as single argv elements after ``--end-of-options``: a ref with
shell metacharacters is data, and one starting with '-' cannot become an option.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
from pathlib import Path

from kvperf.core.errors import BuildError, GitError, UsageError
from kvperf.core.git import git
from kvperf.core.redact import redact_urls
from kvperf.sourcebuild.git_log import LOG_FORMAT, CommitInfo, parse_log

FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def _is_local(repo: str) -> bool:
    return "://" not in repo and not re.match(r"^[\w.-]+@[\w.-]+:", repo)


def mirror_path(cache: Path, repo: str) -> Path:
    """One bare mirror per repository (a local path is keyed by its absolute path)."""
    key = str(Path(repo).resolve()) if _is_local(repo) else repo
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = re.sub(r"[^\w.-]", "_", key.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return cache / "mirrors" / f"{name}-{digest}.git"


def update_mirror(cache: Path, repo: str) -> Path:
    """Clone ``repo`` as a bare mirror once, fetch on later runs; returns the mirror."""
    if _is_local(repo) and not Path(repo).exists():
        raise UsageError(f"--repo {repo!r}: no such directory")
    source = str(Path(repo).resolve()) if _is_local(repo) else repo
    mirror = mirror_path(cache, repo)
    fetch = (mirror / "HEAD").is_file()
    mirror.parent.mkdir(parents=True, exist_ok=True)
    try:
        if fetch:
            git("--git-dir", str(mirror), "fetch", "--quiet", "--prune", "--tags", "origin")
        else:
            git("clone", "--quiet", "--mirror", "--", source, str(mirror))
    except GitError as exc:
        raise BuildError(f"git {'fetch' if fetch else 'clone'} of {redact_urls(repo)!r} "
                         f"failed: {exc.tail()[-800:] or exc.reason}") from None
    return mirror


def resolve_ref(mirror: Path, ref: str) -> str:
    """The full 40-hex sha a ref names (UsageError when it names nothing)."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a git ref")
    try:
        sha = git("--git-dir", str(mirror), "rev-parse", "--verify", "--quiet",
                  "--end-of-options", f"{ref}^{{commit}}").strip()
    except GitError as exc:
        if not exc.exited:  # git missing or hung: not the ref's fault
            raise BuildError(str(exc)) from None
        sha = ""
    if not FULL_SHA.match(sha):
        raise UsageError(f"ref {ref!r} names no commit in the repository")
    return sha


def commit_info(mirror: Path, sha: str) -> CommitInfo:
    try:
        commits = parse_log(git("--git-dir", str(mirror), "show", "-s", f"--format={LOG_FORMAT}",
                                sha))
    except GitError as exc:
        raise BuildError(f"cannot read commit {sha}: {exc.tail()}") from None
    if not commits:
        raise BuildError(f"cannot read commit {sha}: git printed nothing")
    return commits[0]


def add_worktree(mirror: Path, sha: str, dest: Path) -> None:
    """A detached worktree of ``sha`` at ``dest`` (a stale one there is replaced)."""
    with contextlib.suppress(GitError):  # best effort: a real problem fails the add below
        git("--git-dir", str(mirror), "worktree", "prune")
    if dest.exists():
        with contextlib.suppress(GitError):
            git("--git-dir", str(mirror), "worktree", "remove", "--force", str(dest))
    if dest.exists():  # another mirror's tree of this commit (a failed build of another clone)
        shutil.rmtree(dest)
    try:
        git("--git-dir", str(mirror), "worktree", "add", "--force", "--detach", str(dest), sha)
    except GitError as exc:
        raise BuildError(f"checkout of {sha} failed: {exc.tail()[-800:] or exc.reason}") from None


def first_parent_range(mirror: Path, good: str, bad: str) -> list[CommitInfo]:
    """The commits of ``good..bad`` along ``bad``'s first parents, oldest first (``good``
    itself excluded). UsageError when ``good`` is not an ancestor of ``bad``."""
    for sha in (good, bad):
        if not FULL_SHA.match(sha):
            raise UsageError(f"{sha!r} is not a full commit sha")
    try:
        git("--git-dir", str(mirror), "merge-base", "--is-ancestor", good, bad)
    except GitError as exc:
        if not exc.exited or exc.code != 1:
            raise BuildError(str(exc)) from None
        raise UsageError(f"GOOD {good[:12]} is not an ancestor of BAD {bad[:12]}: a bisection "
                         "needs GOOD to be older than BAD on the same history") from None
    try:
        out = git("--git-dir", str(mirror), "log", "--first-parent", "--reverse",
                  f"--format={LOG_FORMAT}", f"{good}..{bad}", "--")
    except GitError as exc:
        raise BuildError(f"cannot list {good[:12]}..{bad[:12]}: {exc.tail()}") from None
    return parse_log(out)
