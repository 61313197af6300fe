"""Bad flags and configs through the real CLI: exit 2, one clear message, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_kvperf, write_config

GOOD = {"requests": 1000, "commands": ["SET"]}

CASES: list[tuple[str, list[str], object, str]] = [
    ("unknown key", [], {**GOOD, "pipeline": 1}, "did you mean 'pipelines'"),
    ("broken json", [], "[{", "not valid JSON"),
    ("missing file", ["--config", "/nonexistent/kvperf.json"], None, "not found"),
    ("unknown command", [], {**GOOD, "commands": ["SETT"]}, "unknown command"),
    ("cpu outside machine", [], {**GOOD, "server_cpu_range": "64"}, "names CPU 64"),
    ("both bounds", [], {**GOOD, "duration": 3}, "exactly one of"),
    ("non-positive", [], {**GOOD, "pipelines": 0}, "must be positive"),
    ("empty list", [], {**GOOD, "clients": []}, "empty list"),
    ("runs zero", ["--runs", "0"], GOOD, "--runs must be at least 1"),
    ("bad mode", ["--mode", "sideways"], GOOD, "invalid choice"),
    ("bad tool", ["--tool", "wrk"], GOOD, "invalid choice"),
    ("missing server bin", ["--server-bin", "/nonexistent/valkey-server"], GOOD,
     "no such executable"),
    ("not a server", ["--server-bin", "/bin/true"], GOOD, "does not look like"),
    ("bad port", ["--mode", "client", "--port", "70000"], GOOD, "--port must be"),
    ("port without client", ["--port", "7000"], GOOD, "--port only applies"),
    ("bad target ip", ["--mode", "client", "--target-ip", "not-an-ip"], GOOD,
     "is not an IP address"),
    ("label escapes", ["--label", "../x"], GOOD, "a label may not"),
    ("tool path missing", ["--valkey-benchmark-path", "/nonexistent/vb"], GOOD, "no such file"),
    ("duration on old tool", ["--tool", "valkey-benchmark"],
     {"duration": 3, "commands": ["SET"]}, "valkey-benchmark 8.0.1"),
    ("cluster read on old tool", ["--tool", "valkey-benchmark"],
     {**GOOD, "commands": ["GET"], "cluster_mode": "yes"}, "cluster_mode with GET"),
    ("unknown flag", ["--pipelines", "3"], GOOD, "unrecognized arguments"),
    ("valkey path without binary", ["--valkey-path", "/tmp"], GOOD, "not a Valkey source tree"),
    ("client mode no server", ["--mode", "client", "--port", "1"], GOOD, "cannot reach"),
    ("bind without password", ["--mode", "server", "--bind", "0.0.0.0"], GOOD,
     "needs a password"),
    ("bind not an ip", ["--mode", "server", "--bind", "example"], GOOD, "not an IP address"),
    ("bind in both mode", ["--bind", "127.0.0.1"], GOOD, "--bind applies only"),
    ("generated password in client mode", ["--mode", "client", "--generate-password"], GOOD,
     "--generate-password applies only"),
    ("tls without ca", ["--mode", "client", "--tls"], GOOD, "--tls needs --tls-ca"),
    ("tls ca missing", ["--mode", "client", "--tls", "--tls-ca", "/nonexistent/ca.pem"], GOOD,
     "no such file"),
    ("tls for own servers", ["--tls", "--tls-ca", "/etc/hostname"], GOOD,
     "apply to --mode client"),
    ("bad db timeout", ["--db-timeout", "0"], GOOD, "must be a positive number"),
    ("server host not ssh", ["--server-host", "http://host"], GOOD,
     "expected ssh://[user@]host[:port]"),
    ("server host with tls", ["--server-host", "ssh://root@127.0.0.1"],
     {**GOOD, "tls_mode": "yes"}, "standalone servers without TLS"),
    ("ssh config alone", ["--ssh-config", "/etc/hostname"], GOOD, "need --server-host"),
    ("server host with definitions", ["--server-host", "ssh://h", "--definitions", "/tmp"],
     None, "does not run --definitions"),
]


@pytest.mark.parametrize(("case", "flags", "config", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_input_exits_2(tmp_path: Path, case: str, flags: list[str], config: object,
                           message: str) -> None:
    args = ["run", "--results-dir", str(tmp_path / "r")]
    if config is not None:
        path = write_config(tmp_path, config if isinstance(config, str) else [config])
        args += ["--config", str(path)]
    done = run_kvperf(*args, *flags, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists(), "bad input must not start a run"


def test_dry_run_prints_the_plan(tmp_path: Path) -> None:
    path = write_config(tmp_path, [{**GOOD, "pipelines": [1, 2], "commands": ["SET", "GET"]}])
    done = run_kvperf("run", "--config", str(path), "--dry-run", "--tool", "valkey-benchmark")
    assert done.returncode == 0, done.stderr
    assert "Plan: 4 trials" in done.stdout and done.stdout.count("GET") == 2


def test_help_is_complete() -> None:
    done = run_kvperf("run", "--help")
    for flag in ("--config", "--results-dir", "--label", "--log-level", "--runs", "--mode",
                 "--target-ip", "--port", "--use-running-server", "--server-bin",
                 "--valkey-path", "--tool", "--valkey-benchmark-path", "--dry-run"):
        assert flag in done.stdout, flag
