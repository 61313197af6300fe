"""A toy git repository whose Makefile "builds" a stand-in server script in seconds.

Named for what it is: a stand-in for Valkey's build, so the cache, failure and ref logic of
the build stage can be tested quickly. Real builds of real Valkey source are tested in
tests/integration/test_builds.py on the fixture repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

MAKEFILE = """\
all:
\t@echo compiling server.c
\t@test -z "$$(grep -l BROKEN src/server.c)" || (echo "src/server.c:1:1: error: BROKEN"; exit 2)
\t@echo building with FLAVOR=$(FLAVOR) >> ../make-calls.txt 2>/dev/null || true
\tprintf '#!/bin/sh\\necho "Valkey server v=0.0.1 sha=toy"\\n' > src/valkey-server
\tchmod +x src/valkey-server
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_toy_repo(path: Path) -> Path:
    """Commits: v1 (tag v1), v2 (tag v2), broken (tag broken; make fails)."""
    (path / "src").mkdir(parents=True)
    (path / "Makefile").write_text(MAKEFILE)
    git(path, "init", "-q", "-b", "main")
    for tag, body in (("v1", "int x = 1;\n"), ("v2", "int x = 2;\n"), ("broken", "BROKEN\n")):
        (path / "src" / "server.c").write_text(body)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {tag}")
        git(path, "tag", tag)
    return path
