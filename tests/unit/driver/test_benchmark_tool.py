"""valkey-benchmark adapter: argv (never a shell string), capabilities, early rejections."""

from __future__ import annotations

from pathlib import Path

from kvperf.config.loader import parse_config
from kvperf.driver.base import Capabilities, Target
from kvperf.driver.benchmark_tool import BenchmarkTool, capabilities_from_help, parse_tool_version
from kvperf.plan.matrix import expand
from kvperf.server.resp import Endpoint

OLD = BenchmarkTool("valkey-benchmark", Path("/usr/bin/valkey-benchmark"), "8.0.1",
                    Capabilities(threads=True, tls=True, cluster=True))


def load(**extra: object):  # type: ignore[no-untyped-def]
    obj = {"requests": 1000, "commands": ["SET"], **extra}
    return expand(parse_config([obj], {0, 1}))[0].load


def test_capabilities_from_help_text() -> None:
    caps = capabilities_from_help(" --threads <num>  x\n --duration <s>  y\n --tls  z\n")
    assert caps.duration and caps.threads and caps.tls
    assert not caps.rps and not caps.warmup and not caps.sequential
    assert parse_tool_version("valkey-benchmark 8.0.1\n") == "8.0.1"


def test_argv_for_builtin_and_custom_commands() -> None:
    target = Target((Endpoint("127.0.0.1", 7000),), cluster=True, tls_ca=Path("/ca.pem"))
    argv = OLD.argv(load(pipelines=16, data_sizes=8), target, 1000)
    assert argv[:3] == ["/usr/bin/valkey-benchmark", "-h", "127.0.0.1"]
    assert argv[-2:] == ["-t", "set"]
    assert "--cluster" in argv and argv[argv.index("-P") + 1] == "16"
    assert argv[argv.index("--cacert") + 1] == "/ca.pem"
    custom = OLD.argv(load(commands=["SET k:__rand_int__ __data__"], data_sizes=4),
                      Target((Endpoint("127.0.0.1", 1),), False), 10)
    assert custom[-3:] == ["SET", "k:__rand_int__", "xxxx"]


def test_shell_metacharacters_stay_single_arguments() -> None:
    argv = OLD.argv(load(commands=["SET $(touch x);`id` v"]),
                    Target((Endpoint("127.0.0.1", 1),), False), 10)
    assert argv[-4:] == ["SET", "$(touch", "x);`id`", "v"]


def test_unsupported_options_name_option_tool_version_and_alternative() -> None:
    reason = OLD.unsupported(_duration(), False, False)
    assert reason is not None
    assert "'duration'" in reason and "valkey-benchmark 8.0.1" in reason and "kvload" in reason
    cluster_get = OLD.unsupported(load(commands=["GET"]), True, False)
    assert cluster_get is not None and "GET" in cluster_get
    assert OLD.unsupported(load(commands=["SET"]), True, False) is None


def _duration():  # type: ignore[no-untyped-def]
    return expand(parse_config([{"duration": 5, "commands": ["SET"]}], {0, 1}))[0].load
