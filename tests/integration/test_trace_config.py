"""From a trace to a kvperf config (issue 38, item 5): a known workload — a command file of
30% SETs and 70% GETs, Zipf keys, two value sizes — recorded through `kvload record`;
`kvperf trace stats TRACE --emit-workload kvperf` writes a config; that config, run by
`kvperf run --config` (as written, from a scratch directory, `--mode client`) through a
second recording proxy, gives back the original's statistics within the tolerances
docs/TRACES.md states: command shares within 1 point, the fitted Zipf exponent within 0.1,
each value-size bucket's share within 2 points, the pipeline depth within 10%, the same
number of load connections, and at least 95% of the distinct keys (never more)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from kvperf.analysis.trace_stats import TraceStats, stats
from kvperf.core.installed import find_program
from kvperf.driver import trace_format
from tests.helpers import recording_proxy, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_strays")]

MIX = "3 SET __key__ __data__\n7 GET __key__\n"
CONNECTIONS = 4


def _kvload() -> Path:
    kvload = find_program("kvload")
    assert kvload is not None, "kvload is installed with kvperf"
    return kvload


def _load_stats(trace: Path, connections: int) -> TraceStats:
    """The trace's statistics over its ``connections`` busiest connections (the load's:
    kvperf's control and seeding connections and kvload's probe send a few commands)."""
    read = trace_format.read(trace)
    busiest = {c for c, _ in Counter(r.conn for r in read.records).most_common(connections)}
    read.records = [r for r in read.records if r.conn in busiest]
    return stats(read)


def _shares(counts: dict[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {k: v / total for k, v in counts.items()}


def test_a_trace_becomes_a_config_whose_run_records_the_same_statistics(
        tmp_path: Path) -> None:
    (tmp_path / "mix.txt").write_text(MIX)
    with recording_proxy(_kvload(), tmp_path / "app.kvt") as port:
        subprocess.run([str(_kvload()), "-p", str(port), "-c", str(CONNECTIONS), "--rps", "4000",
                        "--duration", "2", "-r", "2000", "--key-distribution", "zipf:1.0",
                        "--value-size", "32:3,512:1", "--command-file", "mix.txt", "-q"],
                       cwd=tmp_path, check=True, stdout=subprocess.DEVNULL, timeout=60)
    emitted = run_kvperf("trace", "stats", "app.kvt", "--emit-workload", "kvperf", cwd=tmp_path)
    assert emitted.returncode == 0, emitted.stderr
    config = json.loads(emitted.stdout)
    assert config[0]["key_distribution"].startswith("zipf:"), config
    assert config[0]["clients"] == CONNECTIONS, config  # kvload's PING probe is not a client
    assert "one write" in emitted.stderr, emitted.stderr  # the pipeline note
    (tmp_path / "workload.json").write_text(emitted.stdout)
    with recording_proxy(_kvload(), tmp_path / "again.kvt") as port:
        done = run_kvperf("run", "--config", "workload.json", "--mode", "client", "--port",
                          str(port), cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    original = _load_stats(tmp_path / "app.kvt", CONNECTIONS)
    again = _load_stats(tmp_path / "again.kvt", CONNECTIONS)
    assert again.commands > original.commands, (original.commands, again.commands)
    for name, share in _shares(original.mix).items():
        assert abs(_shares(again.mix).get(name, 0) - share) <= 0.01, (original.mix, again.mix)
    assert original.zipf_s is not None and again.zipf_s is not None
    assert abs(again.zipf_s - original.zipf_s) <= 0.1, (original.zipf_s, again.zipf_s)
    for bucket, share in _shares(original.value_sizes).items():
        assert abs(_shares(again.value_sizes).get(bucket, 0) - share) <= 0.02, (
            original.value_sizes, again.value_sizes)
    assert abs(again.pipeline_depth / original.pipeline_depth - 1) <= 0.1, (
        original.pipeline_depth, again.pipeline_depth)
    assert 0.95 * original.keys <= again.keys <= original.keys, (original.keys, again.keys)
