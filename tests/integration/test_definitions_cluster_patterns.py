"""The corpus' cluster definitions, whose preload is memtier's standard ``-n allkeys
--key-pattern P:P``, run on a real 3-primary valkey 8.0.1 cluster through ``kvperf run
--definitions``: kvload memtier keeps each client's slice of the key range and routes each
key to its slot's primary (as memtier's cluster client does), so the preload writes exactly
the keys asked for — DBSIZE summed over the primaries is ``check.keyspacelen`` and every
primary holds its share — and the clients' mix is the one asked for (INFO commandstats
summed). The same preload against the real memtier_benchmark, key by key and primary by
primary, is in test_memtier_conformance.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.corpus import copy_definitions
from tests.helpers import read_metrics, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600),
              pytest.mark.usefixtures("no_strays")]

STEM = "memtier_benchmark-1Mkeys-string-get-10B-cluster"


def test_a_parallel_allkeys_preload_fills_the_cluster(corpus: Path, tmp_path: Path) -> None:
    copy_definitions(corpus, tmp_path / "defs", STEM)
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "2",
                      "--topologies", "oss-cluster-3-primaries", "--no-db", cwd=tmp_path,
                      timeout=500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["cluster_mode"] is True, row["error"]
    assert row["config_set"] == {"topology": "oss-cluster-3-primaries"}
    # the preload's 1,000,000 keys (P:P -n allkeys, --key-minimum 1 --key-maximum 1000000)
    assert row["checks"]["keyspacelen"] == 1_000_000  # DBSIZE summed over the primaries
    # 100 clients × (999,999 / 100 + 1) SETs, each client its slice once, no redirect
    (preload,) = (tmp_path / "results" / row["label"] / "tests").glob("*/preload.json")
    totals = json.loads(preload.read_text())["ALL STATS"]["Totals"]
    assert (totals["Count"], totals["MOVED/sec"]) == (1_000_000, 0)
    # the clients: --ratio 0:1, every GET on its key's primary, each primary its share
    assert row["definition"]["command_mix"]["get"]["executed"] == 1.0
    assert row["definition"]["command_mix"]["get"]["calls"] > 0
    per_node = row["server"]["calls_per_node"]
    assert len(per_node) == 3 and min(per_node) > 0.25 * sum(per_node), per_node
    assert row["rps"] > 0
