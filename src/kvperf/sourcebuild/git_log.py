"""The last commits of a branch, read with ``git`` (the only git call of commit tracking).

A repository is a local path (a work tree or a bare repository) or a URL; a URL is cloned
bare, single-branch and shallow (depth = the commits wanted) into a temporary directory that
is removed afterwards. ``git`` runs through core/git.py (a timeout, no terminal prompt), and
its failures become one ``UsageError`` (bad repository or branch) naming both.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kvperf.core.errors import GitError, UsageError
from kvperf.core.git import git
from kvperf.core.redact import redact_urls

GIT_TIMEOUT = 300.0
FIELD_SEP = "\x1f"
LOG_FORMAT = FIELD_SEP.join(("%H", "%cI", "%an", "%s"))


@dataclass(frozen=True)
class CommitInfo:
    """One commit of the branch: full sha, committer date (aware), author, subject."""

    sha: str
    committed_at: datetime
    author: str
    subject: str


def parse_log(text: str) -> list[CommitInfo]:
    """Parse ``git log --format=LOG_FORMAT`` output (newest first) into commits."""
    commits = []
    for line in text.splitlines():
        if not line.strip():
            continue
        sha, date, author, subject = line.split(FIELD_SEP, 3)
        commits.append(CommitInfo(sha, datetime.fromisoformat(date), author, subject))
    return commits


def _log(git_dir: Path, branch: str, max_commits: int) -> list[CommitInfo]:
    out = git("--git-dir", str(git_dir), "log", f"--max-count={max_commits}",
              f"--format={LOG_FORMAT}", branch, "--", timeout=GIT_TIMEOUT)
    return parse_log(out)


def _local_git_dir(path: Path) -> Path:
    out = git("-C", str(path), "rev-parse", "--absolute-git-dir", timeout=GIT_TIMEOUT)
    return Path(out.strip())


def branch_commits(repo: str, branch: str, max_commits: int) -> list[CommitInfo]:
    """The last ``max_commits`` commits of ``branch`` in ``repo``, newest first."""
    if max_commits < 1:
        raise UsageError(f"--max-commits must be at least 1, got {max_commits}")
    if not branch or branch.startswith("-"):
        raise UsageError(f"invalid branch name {branch!r}")
    where = f"repository {redact_urls(repo)!r}, branch {branch!r}"
    if Path(repo).is_dir():
        try:
            return _log(_local_git_dir(Path(repo)), branch, max_commits)
        except GitError as exc:
            raise UsageError(f"{where}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="kvperf-git-") as tmp:
        clone = Path(tmp) / "repo.git"
        try:
            git("clone", "--quiet", "--bare", "--single-branch", "--branch", branch,
                f"--depth={max_commits}", "--", repo, str(clone), timeout=GIT_TIMEOUT)
            return _log(clone, branch, max_commits)
        except GitError as exc:
            raise UsageError(f"{where}: {exc}") from None
