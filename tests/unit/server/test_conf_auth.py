"""A node's argv with --bind and a password: the password only in a 0600 file, never argv."""

from __future__ import annotations

import stat
from pathlib import Path

from kvperf.core.secret import Secret
from kvperf.plan.trial import ServerSetup
from kvperf.server.conf import NodePaths, node_argv, write_auth_conf

SETUP = ServerSetup(False, False, None, 3, None, (), (), ())


def test_password_goes_to_a_private_file_read_before_the_flags(tmp_path: Path) -> None:
    conf = write_auth_conf(tmp_path, Secret("pw-123"))
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600
    assert conf.read_text() == ('requirepass "\\x70\\x77\\x2d\\x31\\x32\\x33"\n'
                                'masterauth "\\x70\\x77\\x2d\\x31\\x32\\x33"\n')
    argv = node_argv(Path("/bin/valkey-server"), SETUP, 7000,
                     NodePaths(tmp_path, tmp_path / "log"), None, "10.213.0.1", conf)
    assert argv[:2] == ["/bin/valkey-server", str(conf)]
    assert argv[argv.index("--bind") + 1] == "10.213.0.1"
    assert not any("pw-123" in a for a in argv)


def test_loopback_without_password_by_default(tmp_path: Path) -> None:
    argv = node_argv(Path("/bin/valkey-server"), SETUP, 7000,
                     NodePaths(tmp_path, tmp_path / "log"), None)
    assert argv[1:3] == ["--bind", "127.0.0.1"]
