"""Builds of a *module* repository at any commit, beside the server builder (builder.py).

The same git mirror and one worktree per (commit, recipe) as server builds, under
``<cache>/module-builds/<sha12>-<recipe hash>/`` with a marker written last; a build with
its marker is reused as is, failures are not cached. The recipe comes from the tree at the
commit (``Cargo.toml`` → cargo, ``CMakeLists.txt`` → cmake, ``Makefile`` → make, in that
order) unless ``--module-build CMD`` gives one; ``--module-artifact GLOB`` (relative to the
worktree) finds the ``.so`` when the recipe's default does not.

The command runs through ``sh -c`` in the worktree with these placeholders filled in (and
exported as environment variables): ``{server_src}`` / ``KVPERF_SERVER_SRC`` — the server's
source tree (for ``valkeymodule.h``: ``{server_src}/src/valkeymodule.h``); ``{jobs}`` /
``KVPERF_BUILD_JOBS``; ``{tree}`` / ``KVPERF_MODULE_TREE``. A cargo build starts from the
``target/`` of the newest finished cargo build of the same repository (copied, mtimes kept),
so a new commit recompiles only the module's own crate.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kvperf.core.errors import BuildError, GitError, UsageError
from kvperf.core.git import git
from kvperf.core.jsontypes import JsonObject
from kvperf.core.proc import LineSink, file_tail, run_logged
from kvperf.sourcebuild import git as mirrors
from kvperf.sourcebuild.builder import Build, _locked, make_env
from kvperf.sourcebuild.git_log import CommitInfo

MARKER = ".kvperf-module.json"
LOG_NAME = "kvperf-module-build.log"
PLACEHOLDERS = ("server_src", "jobs", "tree")
ENV_NAMES = {"server_src": "KVPERF_SERVER_SRC", "jobs": "KVPERF_BUILD_JOBS",
             "tree": "KVPERF_MODULE_TREE"}


@dataclass(frozen=True)
class Recipe:
    """How a module tree is built and where its shared object lands."""

    kind: str  # cargo | cmake | make | given
    command: str  # a shell command; placeholders as in the module doc
    artifact: str  # a glob relative to the worktree

    @property
    def key(self) -> str:
        text = f"{self.kind}\0{self.command}\0{self.artifact}"
        return hashlib.sha256(text.encode()).hexdigest()[:8]


DETECTED = (
    ("Cargo.toml", Recipe("cargo", "cargo build --release -j{jobs}", "target/release/*.so")),
    ("CMakeLists.txt", Recipe("cmake", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && "
                                       "cmake --build build -j{jobs}", "build/**/*.so")),
    ("Makefile", Recipe("make", "make -j{jobs}", "**/*.so")),
)


def detect_recipe(top_files: set[str], build: str | None, artifact: str | None,
                  where: str) -> Recipe:
    """The recipe for a tree whose top-level entries are ``top_files`` (pure)."""
    for name, recipe in DETECTED:
        if name in top_files:
            return Recipe(recipe.kind if build is None else "given",
                          build or recipe.command, artifact or recipe.artifact)
    if build is not None:
        return Recipe("given", build, artifact or "**/*.so")
    raise UsageError(f"{where}: no build recipe found (no Cargo.toml, CMakeLists.txt or "
                     "Makefile at the top of the tree); give --module-build CMD and "
                     "--module-artifact GLOB")


def fill(command: str, values: dict[str, str | None]) -> str:
    """``command`` with ``{name}`` placeholders filled (UsageError naming an unknown or an
    unavailable one); other braces (shell's ``${VAR}``) are left alone."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS:
            raise UsageError(f"--module-build: unknown placeholder {{{name}}} (known: "
                             f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)})")
        value = values.get(name)
        if value is None:
            raise UsageError(f"--module-build uses {{{name}}}, but kvperf knows no "
                             f"{name.replace('_', ' ')} here (a server built from --repo "
                             f"or --valkey-path sets it; else set {ENV_NAMES[name]})")
        return value
    return re.sub(r"(?<!\$)\{(\w+)\}", one, command)


def find_artifact(tree: Path, pattern: str) -> Path:
    """The one file ``pattern`` matches under ``tree`` (UsageError: none or several)."""
    found = sorted(p for p in tree.glob(pattern) if p.is_file() and ".git" not in p.parts
                   and not fnmatch.fnmatch(p.name, "*.so.*"))
    if len(found) != 1:
        listed = ", ".join(str(p.relative_to(tree)) for p in found[:5])
        what = "no file" if not found else f"{len(found)} files ({listed})"
        raise UsageError(f"--module-artifact {pattern!r} matched {what} in {tree}; give a "
                         "glob that names the module's one .so")
    return found[0]


_ERROR_LINE = re.compile(r"(error(\[\w+\])?:|Error \d+|fatal:|undefined reference)")


def failure_message(what: str, code: int, log: Path) -> str:
    """The compiler's first error lines, then the log's tail."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    errors = [ln for ln in text.splitlines() if _ERROR_LINE.search(ln)][:5]
    parts = [f"{what} failed (exit {code}); log: {log}", *(["\n".join(errors)] if errors
                                                          else [])]
    parts.append("last lines:\n" + file_tail(log, 10))
    return "\n".join(parts)


@dataclass(frozen=True)
class ModuleBuild:
    """One commit's module build: its shared object, or the reason there is none."""

    ref: str
    sha: str
    recipe: Recipe
    artifact: Path | None
    error: str | None
    seconds: float
    cached: bool
    log: Path | None
    info: CommitInfo | None = None

    @property
    def ok(self) -> bool:
        return self.artifact is not None and self.error is None

    def as_build(self, ref: str | None = None) -> Build:
        """As a server build (its .so where the binary would be): for the build lines and
        the bisection's steps, which read builds."""
        return Build(ref or self.ref, self.sha, self.artifact, self.error, self.seconds,
                     self.cached, self.log, self.info)

    def provenance(self, repo: str) -> JsonObject:
        """What rows record about the module (env.module)."""
        return {"repo": repo, "ref": self.ref, "commit": self.sha, "recipe": self.recipe.kind,
                "build": self.recipe.command, "artifact": str(self.artifact or ""),
                "build_seconds": round(self.seconds, 1), "cached": self.cached}


class ModuleBuilder:
    """Builds refs of one module repository into the cache (builder.py's layout)."""

    def __init__(self, cache: Path, repo: str, build: str | None = None,
                 artifact: str | None = None, server_src: Path | None = None,
                 jobs: int | None = None) -> None:
        self.cache, self.repo = cache, repo
        self.build_cmd, self.artifact = build, artifact
        env_src = os.environ.get(ENV_NAMES["server_src"])
        self.server_src = server_src or (Path(env_src) if env_src else None)
        self.jobs = jobs or os.cpu_count() or 1
        self._mirror: Path | None = None

    def mirror(self) -> Path:
        if self._mirror is None:
            with _locked(self.cache, "mirror-" + mirrors.mirror_path(self.cache,
                                                                     self.repo).name):
                self._mirror = mirrors.update_mirror(self.cache, self.repo)
        return self._mirror

    def resolve(self, ref: str) -> str:
        try:
            return mirrors.resolve_ref(self.mirror(), ref)
        except UsageError as exc:
            raise UsageError(f"--module-repo {self.repo}: {exc}") from None

    def recipe(self, ref: str, sha: str) -> Recipe:
        """The recipe at ``sha`` (UsageError, before any build: none found, or a placeholder
        kvperf cannot fill)."""
        try:
            names = set(git("--git-dir", str(self.mirror()), "ls-tree", "--name-only",
                            sha).split())
        except GitError as exc:
            raise BuildError(f"cannot list the tree of {sha[:12]}: {exc.tail()}") from None
        recipe = detect_recipe(names, self.build_cmd, self.artifact,
                               f"--module-repo {self.repo} at {ref}")
        fill(recipe.command, self._values(Path(".")))
        return recipe

    def _values(self, tree: Path) -> dict[str, str | None]:
        return {"server_src": str(self.server_src) if self.server_src else None,
                "jobs": str(self.jobs), "tree": str(tree)}

    def tree(self, sha: str, recipe: Recipe) -> Path:
        extra = hashlib.sha256(str(self.server_src).encode()).hexdigest()[:4]
        return self.cache / "module-builds" / f"{sha[:12]}-{recipe.key}{extra}"

    def cached(self, sha: str, recipe: Recipe) -> Path | None:
        tree = self.tree(sha, recipe)
        try:
            marker = json.loads((tree / MARKER).read_text())
        except (OSError, json.JSONDecodeError):
            return None
        artifact = tree / marker.get("artifact", "")
        ok = marker.get("sha") == sha and marker.get("recipe") == recipe.key
        return artifact if ok and artifact.is_file() else None

    def build(self, ref: str, sha: str, on_line: LineSink | None = None) -> ModuleBuild:
        """Build ``sha`` (or reuse its cached build); a failed build is ``error``, a glob
        that names no single file a UsageError."""
        started = time.monotonic()
        recipe = self.recipe(ref, sha)
        info = mirrors.commit_info(self.mirror(), sha)
        tree = self.tree(sha, recipe)
        with _locked(self.cache, "module-" + tree.name):
            found = self.cached(sha, recipe)
            if found:
                return ModuleBuild(ref, sha, recipe, found, None,
                                   time.monotonic() - started, True, tree / LOG_NAME, info)
            log = self.cache / "logs" / f"module-{tree.name}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text("")
            try:
                mirrors.add_worktree(self.mirror(), sha, tree)
            except BuildError as exc:
                return ModuleBuild(ref, sha, recipe, None, f"checkout of {ref} failed: {exc}",
                                   time.monotonic() - started, False, log, info)
            if recipe.kind == "cargo":
                self._warm_cargo(tree, log)
            code = self._run(recipe, tree, log, on_line)
            seconds = time.monotonic() - started
            shutil.copyfile(log, tree / LOG_NAME)
            if code != 0:
                error = failure_message(f"module build of {ref} ({sha[:12]})", code, log)
                return ModuleBuild(ref, sha, recipe, None, error, seconds, False, log, info)
            artifact = find_artifact(tree, recipe.artifact)
            marker = {"sha": sha, "ref": ref, "recipe": recipe.key, "kind": recipe.kind,
                      "command": recipe.command, "artifact": str(artifact.relative_to(tree)),
                      "seconds": round(seconds, 1),
                      "finished_at": datetime.now(UTC).isoformat(timespec="seconds")}
            (tree / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            return ModuleBuild(ref, sha, recipe, artifact, None, seconds, False,
                               tree / LOG_NAME, info)

    def _run(self, recipe: Recipe, tree: Path, log: Path, on_line: LineSink | None) -> int:
        values = self._values(tree)
        env = make_env(self.cache)
        env.pop("CARGO_TARGET_DIR", None)  # the artifact is looked for in the worktree
        env.update({ENV_NAMES[k]: v for k, v in values.items() if v is not None})
        return run_logged(["sh", "-c", fill(recipe.command, values)], log, cwd=tree,
                          env=env, on_line=on_line)

    def _warm_cargo(self, tree: Path, log: Path) -> None:
        """Copy ``target/`` of the newest finished cargo build of this repository."""
        donors = sorted((m.stat().st_mtime, m.parent) for m in
                        (self.cache / "module-builds").glob(f"*/{MARKER}")
                        if (m.parent / "target").is_dir() and _same_repo(m.parent, tree))
        if not donors:
            return
        donor = donors[-1][1]
        try:
            shutil.copytree(donor / "target", tree / "target", symlinks=True,
                            dirs_exist_ok=True)
        except OSError as exc:
            _note(log, f"warm start from {donor.name} failed ({exc}); building cold")
            return
        _note(log, f"warm start: target/ copied from the build {donor.name}")


def _same_repo(donor: Path, tree: Path) -> bool:
    """Worktrees of one mirror: their ``.git`` files point into the same mirror."""
    try:
        a, b = (p.joinpath(".git").read_text() for p in (donor, tree))
    except OSError:
        return False
    return a.split("/worktrees/")[0] == b.split("/worktrees/")[0]


def _note(log: Path, line: str) -> None:
    with log.open("a") as handle:
        handle.write(f"kvperf: {line}\n")
