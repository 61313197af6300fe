"""Choosing and probing the load tool: --tool, --valkey-benchmark-path, --valkey-path."""

from __future__ import annotations

from pathlib import Path

from kvperf.core.errors import DriverError, UsageError
from kvperf.core.installed import find_program
from kvperf.driver.base import Driver
from kvperf.driver.benchmark_tool import BenchmarkTool

TOOLS = ("kvload", "valkey-benchmark", "redis-benchmark")


def find_tool(name: str, explicit: Path | None, valkey_path: Path | None) -> Path | None:
    if explicit:
        return explicit
    if valkey_path and name != "kvload":
        built = valkey_path / "src" / name
        if built.is_file():
            return built
    return find_program(name)


def default_tool(valkey_path: Path | None) -> str:
    """kvload when installed, else valkey-benchmark, else redis-benchmark."""
    for name in TOOLS:
        if find_tool(name, None, valkey_path):
            return name
    raise UsageError("no load tool found: install kvperf with its kvload binary, or put "
                     "valkey-benchmark or redis-benchmark on PATH")


def resolve_driver(tool: str | None, tool_path: Path | None,
                   valkey_path: Path | None) -> Driver:
    """Probe the chosen tool; any problem is a usage error (exit 2) before servers start."""
    name = tool or default_tool(valkey_path)
    if name not in TOOLS:
        raise UsageError(f"--tool {name!r} is not one of: {', '.join(TOOLS)}")
    path = find_tool(name, tool_path if name != "kvload" else None, valkey_path)
    if path is None or not path.is_file():
        where = f" at {path}" if path else " on PATH"
        raise UsageError(f"load tool {name!r} not found{where}")
    try:
        if name == "kvload":
            from kvperf.driver.kvload import Kvload

            driver: Driver = Kvload.probe(path)
            return driver
        return BenchmarkTool.probe(name, path)
    except DriverError as exc:
        raise UsageError(str(exc)) from None
