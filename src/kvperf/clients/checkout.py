"""A client library at any commit (``--client NAME@REF --client-repo [NAME=]PATH``): the
library's repository mirrored (sourcebuild/git.py), the ref resolved to its commit, and a
manifest for that commit made from the harness's own (its ``checkout`` section: how the
harness runs the library built from a source tree instead of the pinned release).

The commit's manifest installs into its own directory (keyed by the release's hash, the
commit and the section), into which install.py first exports the commit's tree
(``{checkout}``); its steps may reuse the release's install (``{release}``: a venv, a
module cache), so the release is installed first (``kvperf clients install NAME``) and a
commit's install downloads nothing. Its ``version`` is ``git:<12 hex>``, so two commits are
two series and a ref's name is not part of the identity."""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from kvperf.clients.manifest import Manifest, Source, cache_root
from kvperf.core.errors import BuildError, GitError, UsageError
from kvperf.core.git import git
from kvperf.sourcebuild.git import resolve_ref, update_mirror

REPO_FLAG = "--client-repo"


def repo_for(name: str, repos: Sequence[str]) -> str:
    """The repository of client ``name`` among ``--client-repo [NAME=]PATH`` values: its
    own ``NAME=``, else the one given without a name; UsageError when there is none."""
    named = dict(r.split("=", 1) for r in repos if client_named(r))
    if name in named:
        return named[name]
    plain = [r for r in repos if not client_named(r)]
    if len(plain) > 1:
        raise UsageError(f"{REPO_FLAG} was given {len(plain)} times without NAME=: say which "
                         f"library each is ({REPO_FLAG} {name}=PATH)")
    if not plain:
        raise UsageError(f"--client {name}@REF needs the library's repository: "
                         f"{REPO_FLAG} PATH (or {REPO_FLAG} {name}=PATH; a path or a git URL)")
    return plain[0]


def client_named(value: str) -> bool:
    """``NAME=PATH`` (a repository given for one library by name), not a plain path or URL."""
    head, eq, _ = value.partition("=")
    return bool(eq) and "/" not in head and ":" not in head


def at_commit(release: Manifest, repo: str, ref: str) -> Manifest:
    """The manifest of ``release``'s harness running its library at ``ref`` of ``repo``;
    UsageError (exit 2) when the harness has no ``checkout`` section, the release is not
    installed or the ref names no commit."""
    if release.checkout is None:
        raise UsageError(f"client {release.name} cannot run its library at a commit: its "
                         "manifest has no 'checkout' section (docs/CLIENTS.md)")
    if not release.installed:
        raise UsageError(f"--client {release.name}@{ref}: run kvperf clients install "
                         f"{release.name} first (a commit's build reuses the release's "
                         "install and downloads nothing)")
    mirror = update_mirror(cache_root(), repo)
    sha = resolve_ref(mirror, ref)
    section = repr(release.checkout).encode()
    digest = hashlib.sha256(release.digest.encode() + sha.encode() + section).hexdigest()
    checkout = release.checkout
    return replace(release, version=f"git:{sha[:12]}", install=checkout.install,
                   run=checkout.run or release.run,
                   env=tuple(sorted({**dict(release.env), **dict(checkout.env)}.items())),
                   digest=digest, source=Source(repo, ref, sha, release.install_dir))


def export_tree(manifest: Manifest) -> Path:
    """The commit's files into ``{checkout}`` (install.py, before the steps)."""
    assert manifest.source is not None
    target = manifest.install_dir / "checkout"
    mirror = update_mirror(cache_root(), manifest.source.repo)
    archive = manifest.install_dir / "checkout.tar"
    try:
        git("--git-dir", str(mirror), "archive", "--format=tar", "-o", str(archive),
            manifest.source.sha)
    except GitError as exc:
        raise BuildError(f"cannot export {manifest.key} ({manifest.source.sha[:12]}): "
                         f"{exc.tail() or exc.reason}") from None
    target.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    archive.unlink()
    return target
