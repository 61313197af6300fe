"""A definition's client (or preload tool) → the argv kvperf would run, or why not (pure).

memtier_benchmark runs as ``kvload memtier`` (``memtier.py`` checks its options);
redisbench-admin 0.2 ``parameters`` become ``--name value`` pairs ahead of ``arguments``, as
redisbench-admin's ``prepare_memtier_benchmark_command`` writes them. redis-benchmark and
valkey-benchmark take ``parameters`` mapped to flags as redisbench-admin's
``prepare_redis_benchmark_command`` maps them (clients → -c, requests → -n, threads →
--threads, pipeline → -P, keyspacelen / r → -r, size → -d, command last); a 0.4-style
``arguments`` string is passed as written. Other tools are refused by name.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Any

from kvperf.definitions import memtier
from kvperf.definitions.model import Resources, ToolConfig

MEMTIER = "memtier_benchmark"
BENCHMARK_TOOLS = ("redis-benchmark", "valkey-benchmark")
TOOLS = (MEMTIER, *BENCHMARK_TOOLS)
_BENCHMARK_FLAGS = {"clients": "-c", "requests": "-n", "threads": "--threads",
                    "pipeline": "-P", "keyspacelen": "-r", "r": "-r", "size": "-d"}
# The address, output format and cluster flag are kvperf's to give.
_BENCHMARK_OWNED = frozenset({"-h", "-p", "-s", "-a", "--user", "-u", "--csv", "-q",
                              "--cluster", "--tls", "--cert", "--key", "--cacert", "--sni"})


class ClientError(ValueError):
    """A client kvperf cannot run as written; the message names the tool or option."""


@dataclass(frozen=True)
class ClientPlan:
    """One tool run: ``argv`` holds the options only (kvperf adds the program, the server's
    address, ``--cluster-mode`` for a cluster and the output file when it runs)."""

    tool: str
    argv: tuple[str, ...]
    test_time: int | None = None  # seconds, None when bound by requests
    requests: str | None = None
    test_time_overridden: bool = False
    min_tool_version: str | None = None
    resources: Resources | None = None
    time_limit: int | None = None  # --cap-request-bound: kvload's --time-limit, seconds

    @property
    def runner(self) -> str:
        return "kvload memtier" if self.tool == MEMTIER else self.tool


def _parameter_words(parameters: tuple[tuple[str, Any], ...]) -> list[str]:
    return [word for key, value in parameters for word in (f"--{key}", str(value))]


def _memtier(config: ToolConfig, cluster: bool, override: int | None) -> ClientPlan:
    try:
        words = _parameter_words(config.parameters) + shlex.split(config.arguments)
        options = memtier.parse(words)
    except ValueError as exc:
        raise ClientError(str(exc)) from None
    why = memtier.refusal(options, cluster)
    if why:
        raise ClientError(why)
    overridden = override is not None and memtier.value(options, "test-time") is not None
    if overridden and override is not None:
        options = memtier.with_test_time(options, override)
    test_time = memtier.value(options, "test-time")
    return ClientPlan(MEMTIER, memtier.argv(options),
                      int(test_time) if test_time and test_time.isdigit() else None,
                      memtier.value(options, "requests"), overridden,
                      config.min_tool_version, config.resources)


def _benchmark_words(config: ToolConfig) -> list[str]:
    words: list[str] = []
    command: list[str] = []
    for key, value in config.parameters:
        if key == "command":
            command = shlex.split(str(value))
        elif key in _BENCHMARK_FLAGS:
            words += [_BENCHMARK_FLAGS[key], str(value)]
        elif key == "x":
            raise ClientError(f"{config.tool} parameter 'x' (last argument from a file) is "
                              "not supported")
        else:
            raise ClientError(f"{config.tool} parameter {key!r} is not one redisbench-admin "
                              f"maps ({', '.join([*_BENCHMARK_FLAGS, 'command'])})")
    return words + shlex.split(config.arguments) + command


def _benchmark(config: ToolConfig) -> ClientPlan:
    try:
        words = _benchmark_words(config)
    except ValueError as exc:
        raise ClientError(str(exc)) from None
    owned = sorted(set(words) & _BENCHMARK_OWNED)
    if owned:
        raise ClientError(f"{config.tool} option {owned[0]} is kvperf's to set")
    requests = words[words.index("-n") + 1] if "-n" in words[:-1] else None
    return ClientPlan(config.tool, tuple(words), None, requests, False,
                      config.min_tool_version, config.resources)


def capped(client: ClientPlan, seconds: int) -> ClientPlan:
    """A request-bound memtier client with kvload's ``--time-limit seconds``: it ends at its
    requests or at ``seconds``, whichever comes first (every reply in flight then waited
    for). Other clients unchanged: a ``--test-time`` one is already timed, and
    redis-/valkey-benchmark have no time limit."""
    if client.tool != MEMTIER or client.test_time is not None:
        return client
    return replace(client, argv=(*client.argv, f"--time-limit={seconds}"), time_limit=seconds)


def plan_client(config: ToolConfig, cluster: bool, override: int | None) -> ClientPlan:
    """The run of one client; ClientError naming the tool or option when kvperf cannot."""
    if config.tool == MEMTIER:
        return _memtier(config, cluster, override)
    if config.tool in BENCHMARK_TOOLS:
        return _benchmark(config)
    raise ClientError(f"client tool {config.tool!r} is not supported (kvperf runs "
                      f"{', '.join(TOOLS)})")
