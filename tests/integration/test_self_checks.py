"""A trial that measured misses or empty pops fails with the reason instead of reporting a
number: seeded keys evicted under a tiny maxmemory make GETs miss and LPOPs find nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import read_metrics, require_binary, run_kvperf, write_config

pytestmark = pytest.mark.integration

def _evicting(maxmemory: str) -> dict[str, str]:
    """Room for the seeding client's pipelined batches (~3 MB of query buffer, not
    evictable), not for the seeded data (~13-20 MB): eviction, not OOM."""
    # Valkey 8 frees evicted keys lazily by default: a big evicted list would still count
    # when the next command is checked against maxmemory, and seeding would fail with OOM.
    return {"maxmemory": maxmemory, "maxmemory-policy": "allkeys-random",
            "lazyfree-lazy-eviction": "no"}


@pytest.mark.usefixtures("no_strays")
def test_misses_and_emptied_pops_fail_the_trial(tmp_path: Path) -> None:
    write_config(tmp_path, [
        {"requests": 20000, "keyspacelen": 200000, "data_sizes": 64, "commands": ["GET"],
         "custom-server-configs": _evicting("6mb")},
        {"requests": 400000, "data_sizes": 64, "commands": ["LPOP"], "clients": 5,
         "pipelines": 16, "custom-server-configs": _evicting("12mb")},
        {"requests": 20000, "keyspacelen": 1000, "commands": ["GET"]},
    ])
    done = run_kvperf("run", "--config", "config.json", "--server-bin",
                      require_binary("valkey-server"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    get_evicted, lpop_evicted, get_ok = read_metrics(tmp_path / "results")
    assert get_evicted["status"] == "failed", get_evicted
    assert "reads found their key" in get_evicted["error"], get_evicted["error"]
    assert get_evicted["checks"]["hit_ratio"] < 0.9
    assert lpop_evicted["status"] == "failed", lpop_evicted
    assert "emptied its key" in lpop_evicted["error"], lpop_evicted["error"]
    assert get_ok["status"] == "ok" and get_ok["checks"]["hit_ratio"] == 1.0
