"""Choosing and probing the load tool: --tool, --valkey-benchmark-path, --valkey-path."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

from kvperf.core.errors import DriverError, UsageError
from kvperf.driver.base import Driver
from kvperf.driver.benchmark_tool import BenchmarkTool

TOOLS = ("kvload", "valkey-benchmark", "redis-benchmark")


def _script_dirs() -> list[Path]:
    """Where pip puts kvperf's scripts, kvload among them: the environment's bin/ (a venv's
    even when it is not activated), then the user scheme's (``pip install --user``)."""
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.prefix) / "bin"),
            sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))]
    return [Path(d) for d in dict.fromkeys(dirs)]


def _beside_python(name: str) -> Path | None:
    """A tool installed into the same environment as kvperf, if there is one."""
    return next((d / name for d in _script_dirs() if (d / name).is_file()), None)


def find_tool(name: str, explicit: Path | None, valkey_path: Path | None) -> Path | None:
    if explicit:
        return explicit
    if valkey_path and name != "kvload":
        built = valkey_path / "src" / name
        if built.is_file():
            return built
    on_path = shutil.which(name)
    return Path(on_path) if on_path else _beside_python(name)


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
