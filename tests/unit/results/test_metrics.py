"""The metric catalogue: one direction, unit, family and minimum effect per metric."""

from __future__ import annotations

import pytest

from kvperf.analysis.verdict import MinEffect, lower_is_better, min_effect_for
from kvperf.results.metrics import BY_NAME, CATALOGUE, METRIC_SETS, describe


def test_the_catalogue_says_which_way_is_better() -> None:
    assert not BY_NAME["rps"].lower_is_better
    assert all(m.lower_is_better for m in CATALOGUE if m.name != "rps")
    assert {m.family for m in CATALOGUE} == {"throughput", "latency", "cpu", "memory"}
    assert METRIC_SETS["all"] == tuple(m.name for m in CATALOGUE)
    assert BY_NAME["p99_latency_ms"].min_effect == 0.05 and BY_NAME["rps"].min_effect == 0.02


@pytest.mark.parametrize(("name", "lower", "family"), [
    ("ALL STATS.Totals.Ops/sec", False, "other"),
    ("Totals.Latency", True, "latency"),
    ("instructions.total_per_request", True, "cpu"),
    ("server.rss_bytes_per_key", False, "other"),
])
def test_names_outside_the_catalogue_are_described_by_their_name(
        name: str, lower: bool, family: str) -> None:
    metric = describe(name)
    assert (metric.lower_is_better, metric.family) == (lower, family)
    assert lower_is_better(name) is lower


def test_the_verdict_reads_the_catalogue_and_callers_may_override() -> None:
    assert min_effect_for("server.usec_per_call") == 0.02
    assert min_effect_for("p50_latency_ms", MinEffect(latency=0.1)) == 0.1
    assert min_effect_for("rps", MinEffect(latency=0.1)) == 0.02
