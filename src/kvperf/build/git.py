"""git, and only git: a bare mirror per repository, ref → full sha, one worktree per build.

Refs are passed to git as single argv elements after ``--end-of-options``: a ref with
shell metacharacters is data, and one starting with '-' cannot become an option.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from kvperf.build.git_log import LOG_FORMAT, CommitInfo, display_repo, parse_log
from kvperf.build.proc import run_capture
from kvperf.core.errors import BuildError, UsageError

FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def run_git(*args: str, cwd: Path | None = None, timeout: float = 600) -> tuple[int, str]:
    """(exit code, output) of a git command. Never waits for a credential prompt; a URL's
    credentials are never printed."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return run_capture(["git", *args], cwd=cwd, timeout=timeout, env=env)


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
    if (mirror / "HEAD").is_file():
        code, out = run_git("--git-dir", str(mirror), "fetch", "--quiet", "--prune", "--tags",
                         "origin")
        action = "fetch"
    else:
        mirror.parent.mkdir(parents=True, exist_ok=True)
        code, out = run_git("clone", "--quiet", "--mirror", "--", source, str(mirror))
        action = "clone"
    if code != 0:
        raise BuildError(f"git {action} of {display_repo(repo)!r} failed: "
                         f"{out.replace(repo, display_repo(repo)).strip()[-800:]}")
    return mirror


def resolve_ref(mirror: Path, ref: str) -> str:
    """The full 40-hex sha a ref names (UsageError when it names nothing)."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a git ref")
    code, out = run_git("--git-dir", str(mirror), "rev-parse", "--verify", "--quiet",
                     "--end-of-options", f"{ref}^{{commit}}")
    sha = out.strip()
    if code != 0 or not FULL_SHA.match(sha):
        raise UsageError(f"ref {ref!r} names no commit in the repository")
    return sha


def commit_info(mirror: Path, sha: str) -> CommitInfo:
    code, out = run_git("--git-dir", str(mirror), "show", "-s", f"--format={LOG_FORMAT}", sha)
    commits = parse_log(out) if code == 0 else []
    if not commits:
        raise BuildError(f"cannot read commit {sha}: {out.strip()}")
    return commits[0]


def add_worktree(mirror: Path, sha: str, dest: Path) -> None:
    """A detached worktree of ``sha`` at ``dest`` (a stale one there is replaced)."""
    run_git("--git-dir", str(mirror), "worktree", "prune")
    if dest.exists():
        run_git("--git-dir", str(mirror), "worktree", "remove", "--force", str(dest))
    code, out = run_git("--git-dir", str(mirror), "worktree", "add", "--force", "--detach",
                     str(dest), sha)
    if code != 0:
        raise BuildError(f"checkout of {sha} failed: {out.strip()[-800:]}")
