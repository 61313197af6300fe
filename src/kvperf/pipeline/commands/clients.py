"""`kvperf clients`: the client harnesses kvperf knows (shipped, ``$KVPERF_CLIENTS_DIR``,
``--clients-dir``), and `kvperf clients install NAME… | --all`, which installs them into
kvperf's cache (clients/install.py; docs/CLIENTS.md). ``install_request`` checks the names
against the known harnesses before anything is installed; with --available, a client whose
runtime is missing here is skipped (and named) instead of failing the install."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kvperf.clients.install import MissingRuntime, install, missing_runtime
from kvperf.clients.manifest import Manifest, discover, search_dirs, select
from kvperf.core.errors import UsageError
from kvperf.pipeline.request.stored import InstallRequest


@dataclass(frozen=True)
class Known:
    """Every client harness found, in the order of the folders searched."""

    clients: list[Manifest]


def known_clients(dirs: Sequence[Path]) -> Known:
    """`kvperf clients`: the harnesses of the shipped folders, ``$KVPERF_CLIENTS_DIR``'s and
    ``dirs`` (--clients-dir)."""
    return Known(list(discover(search_dirs(dirs)).values()))


def install_request(*, names: Sequence[str], every: bool, available: bool,
                    dirs: Sequence[Path]) -> InstallRequest:
    """NAME… or --all (not both), --available only with --all, every name known
    (UsageError, exit 2, before anything is installed)."""
    known = discover(search_dirs(dirs))
    if every == bool(names):
        raise UsageError("kvperf clients install: name the clients, or --all (not both); "
                         f"known clients: {', '.join(sorted(known)) or 'none'}")
    if available and not every:
        raise UsageError("kvperf clients install: --available goes with --all")
    return InstallRequest(list(known.values()) if every else select(known, names), available)


class InstallHooks(Protocol):
    """What an install tells while it works: a client skipped (--available) and why, and
    each line of the install steps' progress."""

    def skipped(self, name: str, why: str) -> None: ...

    def said(self, line: str) -> None: ...


@dataclass(frozen=True)
class Installed:
    """The clients installed (or already installed) and those skipped, with why."""

    installed: list[str]
    skipped: list[tuple[str, str]]


def install_clients(request: InstallRequest, hooks: InstallHooks) -> Installed:
    """Each chosen client installed in turn; MissingRuntime (exit 1) for one whose runtime
    is missing here, unless --available skipped it."""
    chosen, skipped = (_available(request.chosen, hooks) if request.available
                       else (request.chosen, []))
    for manifest in chosen:
        try:
            install(manifest, hooks.said)
        except MissingRuntime as exc:  # exit 1: this machine lacks what the client needs
            raise MissingRuntime(f"{exc} (kvperf clients install --all --available skips "
                                 "such clients)") from None
    return Installed([m.name for m in chosen], skipped)


def _available(chosen: list[Manifest], hooks: InstallHooks
               ) -> tuple[list[Manifest], list[tuple[str, str]]]:
    """The clients whose ``requires`` succeed; each skipped one named with why."""
    kept: list[Manifest] = []
    skipped: list[tuple[str, str]] = []
    for manifest in chosen:
        problem = None if manifest.installed else missing_runtime(manifest)
        if problem:
            hooks.skipped(manifest.name, problem)
            skipped.append((manifest.name, problem))
        else:
            kept.append(manifest)
    return kept, skipped
