"""Builds of commits, cached by (sha, make arguments).

Layout of the cache (``--build-cache``, default ``$XDG_CACHE_HOME/kvperf``)::

    mirrors/<name>-<hash>.git     bare mirror of each repository
    builds/<sha12>-<args hash>/   one git worktree per (commit, make arguments), built in place
        .kvperf-build.json        written last, only after a successful build
        kvperf-build.log          the whole build log (kept, also for failures)
    ccache/                       compiler cache shared by all builds (when ccache is present)
    locks/                        one lock per mirror and per build

A build with its marker is reused as is (no make at all). A new commit of a repository
already built starts from the closest finished build with the same deps and Makefiles
(sourcebuild/warm.py), so make recompiles only what the commit changed; otherwise it compiles
cold, and only what ccache has not seen: the worktrees share one ccache with
``CCACHE_BASEDIR`` at the builds directory and ``CCACHE_NOHASHDIR``, so the worktree's path
does not defeat the cache. Failures are not cached: the next run tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kvperf.core.errors import BuildError, GitError, UsageError
from kvperf.core.proc import LineSink, file_tail, probe, run_logged
from kvperf.sourcebuild import git, warm
from kvperf.sourcebuild.git_log import CommitInfo

DEFAULT_MAKE_ARGS = ("BUILD_TLS=yes",)
SERVER_NAMES = ("valkey-server", "redis-server")
MARKER = ".kvperf-build.json"
LOG_NAME = "kvperf-build.log"
CCACHE_WRAPPERS = Path("/usr/lib/ccache")


@dataclass(frozen=True)
class Build:
    """One commit's build: a server binary, or the reason there is none."""

    ref: str
    sha: str | None
    server_bin: Path | None
    error: str | None
    seconds: float
    cached: bool
    log: Path | None
    info: CommitInfo | None = None

    @property
    def ok(self) -> bool:
        return self.server_bin is not None and self.error is None


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kvperf"


def args_key(make_args: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(make_args).encode()).hexdigest()[:8]


def find_server(tree: Path) -> Path | None:
    for name in SERVER_NAMES:
        candidate = tree / "src" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@contextlib.contextmanager
def _locked(cache: Path, name: str) -> Iterator[None]:
    path = cache / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def make_env(cache: Path) -> dict[str, str]:
    """The environment of make: ccache in front of the compiler when it is installed."""
    env = dict(os.environ)
    if shutil.which("ccache") and CCACHE_WRAPPERS.is_dir():
        env["PATH"] = f"{CCACHE_WRAPPERS}:{env.get('PATH', '')}"
        env["CCACHE_DIR"] = str(cache / "ccache")
        env["CCACHE_BASEDIR"] = str(cache / "builds")
        env["CCACHE_NOHASHDIR"] = "true"
    return env


_ERROR_LINE = re.compile(r"(error:|Error \d+|fatal:|undefined reference)")


def failure_message(what: str, code: int, log: Path) -> str:
    """The compiler's own error lines first, then the log's tail."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    errors = [ln for ln in text.splitlines() if _ERROR_LINE.search(ln)][:5]
    parts = [f"{what} failed (make exit {code}); log: {log}"]
    if errors:
        parts.append("\n".join(errors))
    parts.append("last lines:\n" + file_tail(log, 10))
    return "\n".join(parts)


def run_make(tree: Path, make_args: Sequence[str], jobs: int, cache: Path, log: Path,
             on_line: LineSink | None = None) -> int:
    argv = ["make", f"-j{jobs}", *make_args]
    return run_logged(argv, log, cwd=tree, env=make_env(cache), on_line=on_line)


def compiler_facts(given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The compiler make will use (``$CC``, else cc: its ``--version`` first line) and the
    flags the environment hands it (CFLAGS, LDFLAGS, OPTIMIZATION, …), for the build's
    marker: what the rows' ``env.build`` records and compares (analysis/envdiff.py)."""
    env = os.environ if given is None else given
    compiler = env.get("CC") or "cc"
    code, output = probe([compiler, "--version"])
    facts = {"compiler": (output.splitlines() or [""])[0].strip() if code == 0
             else f"{compiler}: not found"}
    for name in ("CFLAGS", "LDFLAGS", "CPPFLAGS", "OPTIMIZATION", "MALLOC"):
        if env.get(name):
            facts[name.lower()] = env[name]
    return facts


def build_facts(server_bin: Path | str) -> dict[str, str]:
    """What a kvperf build of ``server_bin`` recorded (its marker beside ``src/``): make
    arguments (one line), compiler and flags; empty for a binary kvperf did not build."""
    try:
        marker = json.loads((Path(server_bin).resolve().parent.parent / MARKER).read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    if not isinstance(marker, dict):
        return {}
    keys = ("make_args", "compiler", "cflags", "ldflags", "cppflags", "optimization",
            "malloc")
    return {k: " ".join(map(str, marker[k])) if isinstance(marker[k], list) else str(marker[k])
            for k in keys if k in marker}


class Builder:
    """Builds refs of one repository into the cache."""

    def __init__(self, cache: Path, repo: str, make_args: Sequence[str] = DEFAULT_MAKE_ARGS,
                 jobs: int | None = None, warm_start: bool = True) -> None:
        self.cache = cache
        self.warm_start = warm_start  # False: every new commit builds cold (benchmarks)
        self.repo = repo
        self.make_args = tuple(make_args)
        self.jobs = jobs or os.cpu_count() or 1
        self._mirror: Path | None = None

    def mirror(self) -> Path:
        if self._mirror is None:
            with _locked(self.cache, "mirror-" + git.mirror_path(self.cache, self.repo).name):
                self._mirror = git.update_mirror(self.cache, self.repo)
        return self._mirror

    def resolve(self, ref: str) -> str:
        return git.resolve_ref(self.mirror(), ref)

    def first_parent_range(self, good: str, bad: str) -> list[CommitInfo]:
        """``good..bad`` along first parents, oldest first (sourcebuild/git.py)."""
        return git.first_parent_range(self.mirror(), good, bad)

    def tree(self, sha: str) -> Path:
        return self.cache / "builds" / f"{sha[:12]}-{args_key(self.make_args)}"

    def cached(self, sha: str) -> Path | None:
        """The server binary of a finished build of ``sha``, if there is one."""
        tree = self.tree(sha)
        try:
            marker = json.loads((tree / MARKER).read_text())
        except (OSError, json.JSONDecodeError):
            return None
        server = tree / marker.get("server_bin", "")
        ok = marker.get("sha") == sha and list(marker.get("make_args", [])) == list(
            self.make_args)
        return server if ok and server.is_file() else None

    def _warm_worktree(self, sha: str, tree: Path, log: Path) -> str | None:
        """A worktree of ``sha`` at ``tree``, warm-started from the closest finished build
        (sourcebuild/warm.py) when there is one; the donor's sha, or None for a cold worktree."""
        mirror = self.mirror()
        donor = warm.pick_donor(mirror, sha, _finished_builds(self.cache / "builds",
                                                              self.make_args)
                                ) if self.warm_start else None
        if donor is not None:
            try:
                git.add_worktree(mirror, donor.sha, tree)
                copied = warm.seed_worktree(tree, donor, sha, {MARKER, LOG_NAME})
            except (BuildError, GitError, OSError) as exc:
                _note(log, f"warm start from {donor.sha[:12]} failed ({exc}); building cold")
            else:
                _note(log, f"warm start from the build of {donor.sha[:12]}: {copied} build "
                           f"files copied, {donor.changed} source files differ")
                return donor.sha
        git.add_worktree(mirror, sha, tree)
        return None

    def build(self, ref: str, sha: str, on_line: LineSink | None = None) -> Build:
        """Build ``sha`` (or reuse its cached build); failures come back as ``Build.error``."""
        started = time.monotonic()
        info = git.commit_info(self.mirror(), sha)
        tree = self.tree(sha)
        with _locked(self.cache, tree.name):
            server = self.cached(sha)
            if server:
                return Build(ref, sha, server, None, time.monotonic() - started, True,
                             tree / LOG_NAME, info)
            log = self.cache / "logs" / f"{tree.name}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text("")
            try:
                donor = self._warm_worktree(sha, tree, log)
            except BuildError as exc:
                return Build(ref, sha, None, f"checkout of {ref} failed: {exc}",
                             time.monotonic() - started, False, log, info)
            code = run_make(tree, self.make_args, self.jobs, self.cache, log, on_line)
            seconds = time.monotonic() - started
            shutil.copyfile(log, tree / LOG_NAME)
            server = find_server(tree)
            if code != 0 or server is None:
                what = f"build of {ref} ({sha[:12]})"
                error = (failure_message(what, code, log) if code != 0 else
                         f"{what} produced no {' or '.join(SERVER_NAMES)}; log: {log}")
                return Build(ref, sha, None, error, seconds, False, log, info)
            marker = {"sha": sha, "ref": ref, "make_args": list(self.make_args),
                      **compiler_facts(),
                      "server_bin": str(server.relative_to(tree)), "seconds": round(seconds, 1),
                      "warm_from": donor,
                      "finished_at": datetime.now(UTC).isoformat(timespec="seconds")}
            (tree / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            return Build(ref, sha, server, None, seconds, False, tree / LOG_NAME, info)


def _note(log: Path, line: str) -> None:
    with log.open("a") as handle:
        handle.write(f"kvperf: {line}\n")


def _finished_builds(builds: Path, make_args: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(sha, tree) of every finished build with these make arguments, newest first."""
    found = []
    for marker in builds.glob(f"*/{MARKER}"):
        try:
            data = json.loads(marker.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if list(data.get("make_args", [])) == list(make_args) and data.get("sha"):
            found.append((marker.stat().st_mtime, data["sha"], marker.parent))
    return [(sha, tree) for _, sha, tree in sorted(found, reverse=True)]


def build_source_tree(tree: Path, cache: Path, make_args: Sequence[str] = DEFAULT_MAKE_ARGS,
                      jobs: int | None = None, on_line: LineSink | None = None) -> Build:
    """--valkey-path: use the tree's server binary, building the tree in place if it has none."""
    if not (tree / "src").is_dir():
        raise UsageError(f"--valkey-path {str(tree)!r}: not a Valkey source tree (no src/)")
    started = time.monotonic()
    server = find_server(tree)
    if server:
        return Build(str(tree), None, server, None, 0.0, True, None)
    log = tree / LOG_NAME
    log.write_text("")
    code = run_make(tree, make_args, jobs or os.cpu_count() or 1, cache, log, on_line)
    server = find_server(tree)
    error = None
    if code != 0 or server is None:
        error = failure_message(f"build of {tree}", code, log)
    return Build(str(tree), None, server if error is None else None, error,
                 time.monotonic() - started, False, log)
