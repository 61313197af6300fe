"""`compare --server-host … --definitions …` is refused (exit 2) before any build, server or
ssh connection: definitions start replicas, clusters and modules on this host
(docs/guide/run.md "A fresh server per trial on another host")."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.cli.main import main
from tests.helpers import require_binary

DEFINITION = """
version: 0.4
name: set-small
dbconfig: {configuration-parameters: {save: '""'}}
clientconfig:
  tool: memtier_benchmark
  arguments: --command "SET __key__ __data__" --command-key-pattern R --test-time 1 -c 1 -t 1
"""


@pytest.mark.parametrize("sides", ["binaries", "refs"])
def test_compare_server_host_with_definitions_is_refused(
        sides: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "set.yml").write_text(DEFINITION)
    server = require_binary("valkey-server")
    what = (["--server-bin", server, "--server-bin", server] if sides == "binaries" else
            ["base", "set-slow", "--repo", str(tmp_path), "--build-cache", "cache"])
    code = main(["compare", *what, "--definitions", "set.yml", "--override-test-time", "1",
                 "--server-host", "ssh://root@192.0.2.1", "--results-dir", "results"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "--server-host does not run --definitions or module scenarios yet" in err, err
    assert not (tmp_path / "results").exists() and not (tmp_path / "cache").exists()
