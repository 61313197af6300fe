"""``kvperf clients install``: a manifest's ``requires`` checked, then its install steps run
in order (through core/proc.py, cwd = the install directory, no shell, the manifest's env)
into a fresh install directory; the ``.installed`` stamp written last. Idempotent: an
installed client (its stamp holds the manifest's hash) is left as it is."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass

from kvperf.clients.checkout import export_tree
from kvperf.clients.manifest import Manifest
from kvperf.core import proc
from kvperf.core.errors import CommandError, KvperfError

STEP_TIMEOUT = 1800.0  # seconds one install step may take (a Maven download, a Go build)
REQUIRES_TIMEOUT = 30.0
TAIL_LINES = 20

Say = Callable[[str], None]


class InstallError(KvperfError):
    """An install step failed: the message names the client, the step and its output's
    tail (exit 1)."""


class MissingRuntime(KvperfError):
    """A ``requires`` command failed: the runtime the client needs is missing (exit 1 for
    install, exit 2 for run — the CLI decides)."""


@dataclass(frozen=True)
class Installed:
    manifest: Manifest
    already: bool  # nothing was done: its stamp was there


def missing_runtime(manifest: Manifest) -> str | None:
    """Why the client cannot be installed or run here (a ``requires`` command that failed,
    e.g. "node not found"), None when all succeed."""
    for argv in manifest.requires:
        expanded = manifest.expand(argv)
        code, output = proc.probe(expanded, timeout=REQUIRES_TIMEOUT)
        if code == 127:
            return f"{expanded[0]} not found (client {manifest.name} needs it)"
        if code != 0:
            last = output.strip().splitlines()[-1:] or [""]
            return (f"{' '.join(expanded)} failed (exit {code}) for client {manifest.name}"
                    + (f": {last[0]}" if last[0] else ""))
    return None


def runtime_of(manifest: Manifest) -> str | None:
    """The first line of the first ``requires`` command's output (``Python 3.11.2``,
    ``v20.20.2``): the runtime a harness runs on, known before it runs."""
    if not manifest.requires:
        return None
    code, output = proc.probe(manifest.expand(manifest.requires[0]), timeout=REQUIRES_TIMEOUT)
    lines = output.strip().splitlines()
    return lines[0].strip() if code == 0 and lines else None


def install(manifest: Manifest, say: Say) -> Installed:
    """Install one client (nothing when already installed); InstallError or MissingRuntime
    when it cannot be."""
    if manifest.installed:
        say(f"{manifest.name}: already installed in {manifest.install_dir}")
        return Installed(manifest, True)
    problem = missing_runtime(manifest)
    if problem:
        raise MissingRuntime(f"cannot install {manifest.name}: {problem}")
    target = manifest.install_dir
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if manifest.source is not None:
        say(f"{manifest.key}: exporting {manifest.source.sha[:12]} of {manifest.source.repo}")
        export_tree(manifest)
    env = manifest.environment()
    steps = len(manifest.install)
    for number, step in enumerate(manifest.install, 1):
        argv = manifest.expand(step)
        say(f"{manifest.key}: step {number}/{steps}: {' '.join(argv)}")
        _step(manifest, argv, env)
    manifest.stamp.write_text(manifest.digest + "\n")
    say(f"{manifest.key}: installed {manifest.library} {manifest.version} in {target}")
    return Installed(manifest, False)


def _step(manifest: Manifest, argv: tuple[str, ...], env: dict[str, str]) -> None:
    try:
        proc.run(argv, cwd=manifest.install_dir, env=env, timeout=STEP_TIMEOUT).check()
    except CommandError as exc:
        manifest.stamp.unlink(missing_ok=True)
        tail = exc.tail(TAIL_LINES)
        raise InstallError(
            f"installing client {manifest.name} failed: {' '.join(argv)} {exc.reason}"
            + (f"; its output ends:\n{tail}" if tail else "")) from None
