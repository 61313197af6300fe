"""Load tools on this machine for ``kvperf doctor``: versions, capabilities, kvload's build.

Tools are found and probed exactly as ``kvperf run`` finds and probes them (``registry``,
each adapter's ``probe``), so what doctor shows is what a run would use. The judgements
(``tool_fact``, ``build_fact``) are pure.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, fields
from pathlib import Path

from kvperf.core.errors import DriverError, UsageError
from kvperf.core.proc import probe
from kvperf.driver.base import Capabilities, Driver
from kvperf.driver.benchmark_tool import BenchmarkTool, parse_tool_version
from kvperf.driver.kvload import Kvload
from kvperf.driver.registry import TOOLS, default_tool, find_tool
from kvperf.server.fact import Fact, Section, missing

MEMTIER = "memtier_benchmark"
SOURCES = Path(__file__).resolve().parents[3] / "crates" / "kvload"  # editable installs only
INSTALL = {
    "kvload": "pip install . (or scripts/install.sh) builds kvload into the environment's "
              "bin/ (needs cargo)",
    "valkey-benchmark": "install valkey-tools (Debian bookworm-backports); kvload does "
                        "everything it does",
    "redis-benchmark": "install redis-tools (Debian); only needed to drive load the Redis way",
    MEMTIER: "not packaged in Debian; `kvload memtier …` (or kvload linked as "
             "memtier_benchmark) takes memtier_benchmark's options and writes its JSON layout",
}
LIMITS = ("duration", "rps", "warmup")  # valkey-benchmark 8.0/8.1 and redis-benchmark lack them


@dataclass(frozen=True)
class ToolFound:
    """A probed tool: its adapter (None when probing failed, with the error)."""

    name: str
    path: Path
    driver: Driver | None
    error: str = ""
    default: bool = False
    io_uring: bool = False  # its --help offers an io_uring backend


def key_of(name: str) -> str:
    return name.replace("-", "_")


def capability_names(caps: Capabilities) -> list[str]:
    """The capabilities a tool has, by field name, in declaration order."""
    return [f.name for f in fields(caps) if getattr(caps, f.name) is True]


def tool_fact(found: ToolFound) -> Fact:
    """A load tool: version and capabilities, and what it lacks that a config may ask for."""
    key = key_of(found.name)
    if found.driver is None:
        return Fact(key, found.name, {"path": str(found.path)}, f"broken: {found.error[:80]}",
                    "warn", f"{found.path} could not be probed; {INSTALL[found.name]}")
    caps = capability_names(found.driver.capabilities) + (["io_uring"] if found.io_uring else [])
    value = {"path": str(found.path), "version": found.driver.version, "capabilities": caps,
             "default": found.default}
    text = (f"{found.driver.version}{' [default]' if found.default else ''} {found.path}; "
            + ", ".join(caps))
    lacks = [c for c in LIMITS if c not in caps]
    hint = (f"no --{', --'.join(lacks)} at this version: duration-bounded, open-loop or warmed "
            "runs need --tool kvload" if lacks else "")
    return Fact(key, found.name, value, text, "ok", hint)


def memtier_fact(path: Path | None, version_text: str) -> Fact:
    """memtier_benchmark: reported when present; kvperf drives its definitions with kvload."""
    if path is None:
        return missing(key_of(MEMTIER), MEMTIER, INSTALL[MEMTIER])
    version = parse_tool_version(version_text)
    return Fact(key_of(MEMTIER), MEMTIER, {"path": str(path), "version": version},
                f"{version} {path}", "ok", "kvperf runs memtier definitions with kvload")


def build_fact(version: str | None, path: Path | None, built: float | None,
               sources: float | None) -> Fact:
    """kvload's build: present, and newer than its sources (mtimes) when they are here."""
    if path is None or version is None:
        return missing("kvload_build", "kvload build", INSTALL["kvload"])
    value = {"path": str(path), "version": version, "sources": str(SOURCES) if sources else None,
             "up_to_date": None if sources is None or built is None else built >= sources}
    if value["up_to_date"] is None:
        return Fact("kvload_build", "kvload build", value,
                    f"{version} (sources not in this install)", "ok")
    if not value["up_to_date"]:
        return Fact("kvload_build", "kvload build", value, f"{version}, older than its sources",
                    "warn", "crates/kvload changed after this build: rerun scripts/install.sh")
    return Fact("kvload_build", "kvload build", value,
                f"{version}, built after its last source change", "ok")


def newest_source(root: Path) -> float | None:
    """Newest mtime of the crate's sources and manifests (None when the crate is absent)."""
    paths = [root / "Cargo.toml", root / "Cargo.lock", *(root / "src").rglob("*.rs")]
    times = [p.stat().st_mtime for p in paths if p.is_file()]
    return max(times) if times and (root / "Cargo.toml").is_file() else None


def probe_tool(name: str, path: Path, default: bool) -> ToolFound:
    """Probe one tool as `kvperf run` would (kvload: also whether --help offers io_uring)."""
    try:
        if name == "kvload":
            _, help_text = probe([str(path), "--help"])
            return ToolFound(name, path, Kvload.probe(path), default=default,
                             io_uring="io_uring" in help_text or "io-uring" in help_text)
        return ToolFound(name, path, BenchmarkTool.probe(name, path), default=default)
    except DriverError as exc:
        return ToolFound(name, path, None, str(exc), default)


def tools_section() -> Section:
    """kvload (and its build), valkey-benchmark, redis-benchmark, memtier_benchmark."""
    try:
        chosen: str | None = default_tool(None)
    except UsageError:
        chosen = None
    facts = []
    for name in TOOLS:
        path = find_tool(name, None, None)
        found = probe_tool(name, path, name == chosen) if path and path.is_file() else None
        facts.append(tool_fact(found) if found else missing(key_of(name), name, INSTALL[name]))
        if name == "kvload":
            facts.append(_kvload_build(found))
    memtier = shutil.which(MEMTIER)
    text = probe([memtier, "--version"])[1] if memtier else ""
    facts.append(memtier_fact(Path(memtier) if memtier else None, text))
    return Section("Load tools", tuple(facts))


def _kvload_build(found: ToolFound | None) -> Fact:
    if found is None or found.driver is None:
        return build_fact(None, None, None, None)
    return build_fact(found.driver.version, found.path, found.path.stat().st_mtime,
                      newest_source(SOURCES))
