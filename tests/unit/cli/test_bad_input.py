"""Bad flags and configs through the real CLI: exit 2, one clear message, no traceback; and
per subcommand, bad input refused before any build, server or connection (a recording fake
world sees no call)."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import pytest

from kvperf.cli.main import main
from kvperf.pipeline.world import World
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
    ("unknown key distribution", [], {**GOOD, "key_distribution": ["uniform", "pareto:1"]},
     "'key_distribution': 'pareto:1' is not one of"),
    ("ill-formed value sizes", [], {**GOOD, "value_sizes": "64-"}, "'value_sizes': '64-'"),
    ("unknown value content", [], {**GOOD, "value_content": "zeros"},
     "'value_content': 'zeros'"),
    ("ttl of 0", [], {**GOOD, "ttl": 0}, "'ttl': '0'"),
    ("distributions on old tool", ["--tool", "valkey-benchmark"],
     {**GOOD, "key_distribution": "zipf:0.99"}, "'key_distribution' is not supported"),
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
    # client harnesses (docs/CLIENTS.md)
    ("unknown client", ["--client", "no-such-lib"], GOOD, "unknown client 'no-such-lib'"),
    ("unknown model", ["--client", "redis-py:threads"], GOOD, "'threads' is not a concurrency"),
    ("client with cluster", ["--client", "redis-py"], {**GOOD, "cluster_mode": "yes"},
     "cluster_mode yes: client harnesses"),
    ("client command", ["--client", "redis-py"], {**GOOD, "commands": ["LPUSH"]},
     "commands 'LPUSH': a client harness speaks"),
    ("single with clients", ["--client", "redis-py", "--concurrency", "single"],
     {**GOOD, "clients": 4}, "clients 4 with concurrency single"),
    ("concurrency without client", [], {**GOOD, "concurrency": "pool"},
     "'concurrency' applies to client harnesses"),
    ("bad concurrency", [], {**GOOD, "concurrency": "fork"}, "'fork' is not a concurrency"),
    ("client with measure", ["--client", "redis-py", "--measure", "instructions"], GOOD,
     "--measure does not apply with --client"),
    ("client with commits", ["--client", "redis-py", "--commits", "a", "b"], GOOD,
     "--commits does not apply with --client"),
    ("missing clients dir", ["--client", "x", "--clients-dir", "/nonexistent/h"], GOOD,
     "clients folder /nonexistent/h does not exist"),
    ("client sweep by percents", ["--client", "redis-py", "--rate-sweep"], GOOD,
     "a client harness's rate sweep runs at fixed rates"),
    ("client sweep in config", ["--client", "redis-py"], {**GOOD, "rate_sweep": True},
     "a client harness's rate sweep runs at fixed rates"),
    ("client sweep bad rate", ["--client", "redis-py", "--rate-sweep", "--rates", "0"], GOOD,
     "every value must be a positive number"),
]


def _main(argv: list[str]) -> int:
    """kvperf's main() in this process (argparse's own refusals raise SystemExit(2))."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(("case", "flags", "config", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                           flags: list[str], config: object, message: str) -> None:
    """In this process (an interpreter start per case cost ~50 × 1-5 s): main() is what the
    console script runs; the installed script itself is checked just below."""
    args = ["run", "--results-dir", str(tmp_path / "r")]
    if config is not None:
        path = write_config(tmp_path, config if isinstance(config, str) else [config])
        args += ["--config", str(path)]
    code = _main([*args, *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err, err
    assert not (tmp_path / "r").exists(), "bad input must not start a run"


def test_the_installed_script_exits_2_with_one_message_and_no_traceback(
        tmp_path: Path) -> None:
    path = write_config(tmp_path, [{**GOOD, "pipeline": 1}])
    done = run_kvperf("run", "--results-dir", str(tmp_path / "r"), "--config", str(path),
                      timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "did you mean 'pipelines'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


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


class FakeWorld:
    """The world (pipeline/world.py) of a run that must not start: every build, server,
    SSH host or database it is asked for is recorded, and fails the test at once."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def _used(self, what: str) -> NoReturn:
        self.calls.append(what)
        raise AssertionError(f"bad input reached the world: {what}")

    def world(self) -> World:
        return World(builder=lambda request: self._used("build"),
                     tree_builder=lambda tree, request, on_line: self._used("build"),
                     launcher=lambda *args, **kwargs: self._used("server"),
                     remote=lambda request: self._used("ssh host"),
                     store=lambda url, timeout: self._used("database"))


DEFINITION = """
version: 0.4
name: get-small
redis-topologies: [oss-standalone, oss-standalone-with-redisearch]
dbconfig:
  configuration-parameters: {save: '""'}
  check: {keyspacelen: 1000}
  preload_tool:
    tool: memtier_benchmark
    arguments: --ratio 1:0 --key-pattern P:P -n allkeys --key-maximum 1000 -c 1 -t 1
clientconfig:
  tool: memtier_benchmark
  arguments: --command "GET __key__" --command-key-pattern R --test-time 1 -c 1 -t 1
"""

REFS = ["base", "next", "--repo", "{d}/repo", "--build-cache", "{d}/cache"]

# (subcommand, argv after it, what the message says); {d} is the test's directory. Each
# case is one that used to cost a build, a server or a connection before it was refused.
REFUSED: list[tuple[str, list[str], str]] = [
    ("run", ["--valkey-path", "{d}/tree", "--runs", "0"], "--runs must be at least 1"),
    ("run", ["--server-host", "ssh://root@192.0.2.1", "--measure", "instructions"],
     "--server-host measures timing only"),
    ("run", ["--server-host", "ssh://root@192.0.2.1", "--config", "{d}/tls.json"],
     "standalone servers without TLS"),
    ("run", ["--commits", "base", "next", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
             "--server-host", "ssh://root@192.0.2.1", "--remote-ports", "9-1"],
     "--remote-ports '9-1'"),
    ("run", ["--commits", "base", "next", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
             "--profile", "--profile-frequency", "0"], "--profile-frequency must be"),
    ("run", ["--commits", "base", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
             "--db", "mysql://x/y"], "unsupported database 'mysql'"),
    ("run", ["--commits", "base", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
             "--config", "{d}/bad.json"], "not valid JSON"),
    ("compare", [*REFS, "--measure", "instructions", "--min-effect", "150"],
     "--min-effect must be a percentage in [0, 100), got 150.0"),
    ("compare", [*REFS, "--runs", "0"], "--runs must be at least 1, got 0"),
    ("compare", [*REFS, "--water-line", "0"], "--water-line must be a percentage"),
    ("compare", [*REFS, "--config", "{d}/bad.json"], "not valid JSON"),
    ("compare", [*REFS, "--server-host", "ssh://root@192.0.2.1", "--remote-server-bin", "x"],
     "--remote-server-bin names one binary"),
    ("compare", [*REFS, "--definitions", "{d}/set.yml", "--tool", "kvload"],
     "--tool does not apply with --definitions"),
    ("compare", [*REFS, "--definitions", "{d}/set.yml", "--topologies",
                 "oss-standalone-with-redisearch"],
     "none of the selected definitions can run here"),
    ("compare", [*REFS, "--schedule", "duet", "--config", "{d}/requests.json"],
     "--schedule duet: config object 0 bounds its measure stage by 'requests'"),
    ("compare", [*REFS, "--db", "mysql://x/y"], "unsupported database 'mysql'"),
    ("compare", [*REFS, "--measure", "instructions", "--exclude-disturbed"],
     "--retry-disturbed/--exclude-disturbed judge timings; --measure instructions"),
    ("run", ["--mode", "server", "--retry-disturbed"], "--mode server measures nothing"),
    ("noise", ["--commit", "base", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
               "--runs", "0"], "--runs must be at least 1, got 0"),
    ("noise", ["--commit", "base", "--repo", "{d}/repo", "--build-cache", "{d}/cache",
               "--config", "{d}/bad.json"], "not valid JSON"),
    ("bisect", [*REFS, "--min-effect", "150"], "--min-effect must be a percentage"),
    ("bisect", [*REFS, "--runs", "2", "--max-runs", "1"], "--max-runs (1) must be at least"),
    ("bisect", [*REFS, "--measure", "timing", "--definitions", "{d}/set.yml", "--config",
                "{d}/requests.json"], "--config does not apply with --definitions"),
    ("regressions", ["--db", "{d}/h.db", "--bisect", "--repo", "{d}/repo", "--runs", "0"],
     "--runs must be at least 1, got 0"),
    ("regressions", ["--db", "{d}/h.db", "--max-pvalue", "2"], "--max-pvalue must be in"),
    ("history", ["--db", "{d}/h.db", "--last", "0"], "--last must be at least 1"),
    ("history", ["--db", "{d}/h.db", "--metric", "rpz"], "did you mean 'rps'"),
    ("report", ["--history", "--db", "{d}/h.db", "--markdown", "{d}/x.md"],
     "--history reads the database"),
    ("track", ["claim", "--runner", "r", "--hold", "-1", "--db", "{d}/h.db"],
     "--hold must be >= 0"),
    ("track", ["determine", "--repo", "{d}/repo", "--config", "{d}/missing.json", "--db",
               "{d}/h.db"], "cannot read config"),
    ("db", ["push", "{d}/missing.json", "--db", "{d}/h.db"], "no such file"),
    ("compare-results", ["{d}/a.json", "{d}/b.json", "--water-line", "100"],
     "--water-line must be a percentage"),
    ("doctor", ["--sample", "61"], "--sample must be between 0 and 60 seconds"),
]


@pytest.mark.parametrize(("command", "argv", "says"), REFUSED,
                         ids=[f"{c[0]} {' '.join(c[1])}" for c in REFUSED])
def test_bad_input_is_refused_before_any_build_server_or_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: str, argv: list[str], says: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tree" / "src").mkdir(parents=True)  # a Valkey tree without a server
    (tmp_path / "set.yml").write_text(DEFINITION)
    write_config(tmp_path, [{**GOOD, "tls_mode": "yes"}], "tls.json")
    write_config(tmp_path, [GOOD], "requests.json")
    write_config(tmp_path, "[{", "bad.json")
    fake = FakeWorld()
    code = main([command, *(a.replace("{d}", str(tmp_path)) for a in argv)], fake.world())
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert says in err, err
    assert fake.calls == []
    assert not (tmp_path / "results").exists() and not (tmp_path / "cache").exists()
    assert not (tmp_path / "h.db").exists()
