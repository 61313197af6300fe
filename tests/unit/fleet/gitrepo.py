"""A real git repository with N commits, for commit-tracking tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_repo(path: Path, commits: int, branch: str = "unstable") -> list[str]:
    """A git repository with ``commits`` commits on ``branch``; returns shas oldest first."""
    env = {"GIT_AUTHOR_NAME": "A U Thor", "GIT_AUTHOR_EMAIL": "a@example.invalid",
           "GIT_COMMITTER_NAME": "A U Thor", "GIT_COMMITTER_EMAIL": "a@example.invalid",
           "PATH": "/usr/bin:/bin", "HOME": str(path)}
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True, env=env)
    shas = []
    for i in range(commits):
        (path / "f.txt").write_text(f"{i}\n")
        date = f"2025-01-01T{i // 60:02d}:{i % 60:02d}:00+00:00"
        cenv = {**env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        subprocess.run(["git", "-C", str(path), "add", "f.txt"], check=True, env=cenv)
        subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", f"change {i}: a | b"],
                       check=True, env=cenv)
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True,
                             env=cenv, capture_output=True, text=True)
        shas.append(out.stdout.strip())
    return shas
