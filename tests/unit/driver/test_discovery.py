"""Load tools for doctor: capabilities as names, what a tool lacks, kvload's build freshness."""

from __future__ import annotations

import os
from pathlib import Path

from kvperf.driver.base import Capabilities
from kvperf.driver.benchmark_tool import BenchmarkTool
from kvperf.driver.discovery import (
    SOURCES,
    ToolFound,
    build_fact,
    capability_names,
    memtier_fact,
    newest_source,
    tool_fact,
)
from kvperf.driver.kvload import Kvload

OLD = BenchmarkTool("valkey-benchmark", Path("/usr/bin/valkey-benchmark"), "8.0.1",
                    Capabilities(threads=True, tls=True, cluster=True, seed=True))


def test_capability_names_in_declaration_order() -> None:
    assert capability_names(Capabilities(duration=True, threads=True, tls=False,
                                         cluster=False)) == ["duration", "threads"]


def test_old_benchmark_tool_is_ok_but_says_what_it_lacks() -> None:
    fact = tool_fact(ToolFound("valkey-benchmark", OLD.path, OLD))
    assert (fact.key, fact.status) == ("valkey_benchmark", "ok")
    assert fact.value == {"path": "/usr/bin/valkey-benchmark", "version": "8.0.1",
                          "capabilities": ["threads", "tls", "cluster", "seed"],
                          "default": False}
    assert fact.hint.startswith("no --duration, --rps, --warmup at this version")


def test_kvload_default_with_io_uring_has_no_hint() -> None:
    kvload = Kvload(Path("/venv/bin/kvload"), "0.2.0")
    fact = tool_fact(ToolFound("kvload", kvload.path, kvload, default=True, io_uring=True))
    assert fact.hint == "" and fact.value["default"] is True
    assert fact.value["capabilities"][-1] == "io_uring" and "rps" in fact.value["capabilities"]
    assert fact.text.startswith("0.2.0 [default] /venv/bin/kvload; duration, ")


def test_a_tool_that_fails_its_probe_is_a_warning_with_the_error() -> None:
    fact = tool_fact(ToolFound("redis-benchmark", Path("/x/redis-benchmark"), None,
                               "--version failed: segfault"))
    assert fact.status == "warn" and "segfault" in fact.text and "redis-tools" in fact.hint


def test_memtier_missing_or_present() -> None:
    gone = memtier_fact(None, "")
    assert (gone.key, gone.status, gone.value) == ("memtier_benchmark", "missing", None)
    here = memtier_fact(Path("/usr/bin/memtier_benchmark"), "memtier_benchmark 2.1.0\n")
    assert here.status == "ok" and here.value["version"] == "2.1.0"


def test_kvload_build_fresh_stale_unknown_sources_or_absent() -> None:
    path = Path("/venv/bin/kvload")
    fresh = build_fact("0.1.0", path, built=200.0, sources=100.0)
    assert (fresh.status, fresh.value["up_to_date"]) == ("ok", True)
    assert fresh.value["sources"] == str(SOURCES)
    stale = build_fact("0.1.0", path, built=100.0, sources=200.0)
    assert stale.status == "warn" and "scripts/install.sh" in stale.hint
    wheel = build_fact("0.1.0", path, built=100.0, sources=None)
    assert (wheel.status, wheel.value["up_to_date"], wheel.value["sources"]) == ("ok", None,
                                                                                 None)
    assert build_fact(None, None, None, None).status == "missing"


def test_newest_source_sees_rust_files_and_manifests(tmp_path: Path) -> None:
    assert newest_source(tmp_path) is None  # no crate here
    (tmp_path / "src" / "net").mkdir(parents=True)
    for name, when in (("Cargo.toml", 100), ("Cargo.lock", 150), ("src/main.rs", 120),
                       ("src/net/io.rs", 300), ("README.md", 900)):
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, (when, when))
    assert newest_source(tmp_path) == 300
