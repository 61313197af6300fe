"""compare-results grouping and verdicts, on synthetic rows with known answers."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from kvperf.analysis.comparison import (
    compare,
    compare_paired,
    compare_sides,
    compare_summaries,
    group_key,
)
from kvperf.analysis.verdict import Verdict
from kvperf.report.comparison import markdown
from tests.helpers import run_main


def rows(rps: list[float], env: str, command: str = "SET", seed_format: bool = False
         ) -> list[dict[str, Any]]:
    out = []
    for i, value in enumerate(rps):
        row: dict[str, Any] = {"command": command, "data_size": 16, "pipeline": 10,
                               "clients": 50, "requests": 1000, "rps": value,
                               "p50_latency_ms": 1000 / value, "cluster_mode": False,
                               "tls": False, "timestamp": f"t{i}", "commit": env}
        if not seed_format:
            row |= {"status": "ok", "run": i + 1, "trial_id": command,
                    "env": {"host": env, "kernel": env}}
        out.append(row)
    return out


def noisy(mean: float, n: int, cv: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [mean * (1 + rng.gauss(0, cv)) for _ in range(n)]


def test_rows_differing_only_in_env_still_pair() -> None:
    base, new = rows([100.0, 101.0], "host-a"), rows([100.5, 99.0], "host-b")
    assert group_key(base[0]) == group_key(new[0])
    results, unmatched = compare(base, new, "rps")
    assert len(results) == 1 and unmatched == []


def test_seed_format_rows_compare_with_kvperf_rows() -> None:
    results, _ = compare(rows([100.0, 100.0], "x", seed_format=True), rows([100.0, 100.0], "y"))
    assert {r.metric for r in results} == {"rps", "p50_latency_ms"}


def test_a_clear_15_percent_drop_is_a_regression_and_noise_is_not() -> None:
    base = rows(noisy(100_000, 8, 0.02, 1), "a") + rows(noisy(50_000, 8, 0.02, 2), "a", "GET")
    new = rows(noisy(85_000, 8, 0.02, 3), "b") + rows(noisy(50_000, 8, 0.02, 4), "b", "GET")
    results, _ = compare(base, new, "all")
    verdicts = {(dict(r.group)["command"], r.metric): r.decision.verdict for r in results}
    assert verdicts[("SET", "rps")] is Verdict.REGRESSION
    assert verdicts[("SET", "p50_latency_ms")] is Verdict.REGRESSION  # latency went up
    assert verdicts[("GET", "rps")] not in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
    set_rps = next(r for r in results if r.metric == "rps" and dict(r.group)["command"] == "SET")
    assert 0.82 < set_rps.ci.ratio < 0.88 and set_rps.ci.high < 1.0
    assert "n=8" in set_rps.base.text() and "CV=" in set_rps.base.text()


def test_cli_writes_markdown_graphs_and_fails_on_regression(tmp_path: Path) -> None:
    base, new = tmp_path / "a.json", tmp_path / "b.json"
    base.write_text(json.dumps(rows(noisy(100_000, 8, 0.02, 5), "a")))
    new.write_text(json.dumps(rows(noisy(80_000, 8, 0.02, 6), "b")))
    done = run_main("compare-results", base, new, "--output", tmp_path / "r.md",
                      "--graphs", tmp_path / "g", "--fail-on-regression")
    assert done.returncode == 1, done.stderr
    report = (tmp_path / "r.md").read_text()
    assert "regression" in report and "| SET d=16 P=10 c=50 | rps |" in report
    assert (tmp_path / "g" / "comparison_rps.png").stat().st_size > 1000
    same = run_main("compare-results", base, base, "--fail-on-regression")
    assert same.returncode == 0, same.stdout
    missing = run_main("compare-results", base, tmp_path / "nope.json")
    assert missing.returncode == 2 and "not found" in missing.stderr
    (tmp_path / "run-a").mkdir()  # a results directory stands for its metrics.json
    (tmp_path / "run-a" / "metrics.json").write_text(base.read_text())
    directory = run_main("compare-results", tmp_path / "run-a", base, "--fail-on-regression")
    assert directory.returncode == 0, directory.stderr
    empty = run_main("compare-results", tmp_path / "g", base)
    assert empty.returncode == 2 and "without a metrics.json" in empty.stderr, empty.stderr


def test_drift_shared_by_a_pair_is_not_noise_when_paired_but_is_when_unpaired() -> None:
    """The machine's speed wanders ±25% between rounds (these VMs do), but within a round A
    and B see the same speed: interleaving cancels it, so the paired verdict stands while the
    same values judged unpaired are unstable."""
    speed = noisy(1.0, 10, 0.25, 5)
    jitter = noisy(1.0, 10, 0.01, 6)
    base = rows([600_000 * s for s in speed], "a")
    new = rows([0.85 * 600_000 * s * j for s, j in zip(speed, jitter, strict=True)], "b")
    paired = next(r for r in compare_paired(base, new, "rps"))
    assert paired.base.cv > 0.10 and paired.new.cv > 0.10
    assert paired.decision.verdict is Verdict.REGRESSION, paired.decision
    unpaired, _ = compare(base, new, "rps")
    assert unpaired[0].decision.verdict is Verdict.UNSTABLE
    assert unpaired[0].decision.reason.startswith("run-to-run CV")


def test_a_pair_ratio_that_wanders_is_unstable() -> None:
    """Ratios wandering by 20% around −5%: not significant, not within ±2%: unstable says
    why. (A change the t-test finds despite the noise is still flagged.)"""
    base = rows([600_000.0] * 10, "a")
    new = rows([600_000 * r for r in noisy(0.95, 10, 0.2, 7)], "b")
    paired = compare_paired(base, new, "rps")[0]
    assert paired.decision.verdict is Verdict.UNSTABLE
    assert paired.decision.reason.startswith("paired B/A ratio CV")
    strong = rows([600_000 * r for r in noisy(0.5, 10, 0.25, 7)], "b")
    flagged = compare_paired(base, strong, "rps")[0].decision
    assert flagged.verdict is Verdict.REGRESSION and "paired B/A ratio CV" in flagged.reason


def _seed_rows(command: str, rps: list[float]) -> list[dict[str, Any]]:
    """Seed-format rows as valkey-benchmark writes them: avg/p50 = clients/rps, the other
    latency fields constant (the issue's files)."""
    return [{"command": command, "data_size": 16, "pipeline": 1, "clients": 50,
             "requests": 100000, "rps": v, "avg_latency_ms": 50_000 / v,
             "p50_latency_ms": 50_000 / v * 0.98, "min_latency_ms": 0.103,
             "p95_latency_ms": 0.791, "p99_latency_ms": 1.015, "max_latency_ms": 2.311,
             "cluster_mode": False, "tls": False} for v in rps]


def test_the_issues_example_flags_set_rps_and_leaves_get_alone(tmp_path: Path) -> None:
    """Issue 17: 6 runs per side, SET rps 100,189 (CV 0.8%) → 89,563 (CV 1.1%), GET the same.
    Under the rank-test rule every row was inconclusive (Mann–Whitney floor 0.0022, BH 0.022)."""
    base = _seed_rows("SET", noisy(100_189, 6, 0.008, 11)) + \
        _seed_rows("GET", noisy(120_000, 6, 0.008, 12))
    new = _seed_rows("SET", noisy(89_563, 6, 0.011, 13)) + \
        _seed_rows("GET", noisy(120_000, 6, 0.008, 14))
    results, _ = compare(base, new, "all")
    verdicts = {(dict(r.group)["command"], r.metric): r.decision.verdict for r in results}
    assert verdicts[("SET", "rps")] is Verdict.REGRESSION
    assert verdicts[("SET", "avg_latency_ms")] is Verdict.REGRESSION
    assert verdicts[("GET", "rps")] is Verdict.NO_CHANGE
    assert all(v is Verdict.NO_CHANGE for (cmd, _), v in verdicts.items() if cmd == "GET")
    files = tmp_path / "base.json", tmp_path / "new.json"
    for path, rows_ in zip(files, (base, new), strict=True):
        path.write_text(json.dumps(rows_))
    done = run_main("compare-results", *files, "--fail-on-regression")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "regression" in done.stdout


def test_one_row_per_side_is_judged_against_the_water_line(tmp_path: Path) -> None:
    """The first-hour issue, item 6: one value per side, an 18% drop."""
    base, new = tmp_path / "a.json", tmp_path / "b.json"
    base.write_text(json.dumps(rows([100_000.0], "a")))
    new.write_text(json.dumps(rows([82_000.0], "b")))
    results, _ = compare(rows([100_000.0], "a"), rows([82_000.0], "b"), "rps")
    assert results[0].decision.verdict is Verdict.REGRESSION
    assert not results[0].decision.statistics
    done = run_main("compare-results", base, new, "--fail-on-regression", "--output",
                      tmp_path / "r.md")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "single sample, no statistics" in (tmp_path / "r.md").read_text()
    wide = run_main("compare-results", base, new, "--fail-on-regression",
                      "--water-line", "20", "--metrics", "rps")
    assert wide.returncode == 0, wide.stdout + wide.stderr
    bad = run_main("compare-results", base, new, "--water-line", "0")
    assert bad.returncode == 2 and "--water-line" in bad.stderr


def test_stored_summaries_get_the_same_rule() -> None:
    """history --sha: (n, mean, sd) per side; one series falls 10% at 1% CV, one is flat,
    one has a single trial per side (the water line)."""
    items = [("s1", "rps", (5, 100.0, 1.0), (5, 90.0, 0.9)),
             ("s1", "p50_latency_ms", (5, 1.0, 0.01), (5, 1.11, 0.011)),
             ("s2", "rps", (5, 100.0, 0.5), (5, 100.2, 0.5)),
             ("s3", "rps", (1, 100.0, math.nan), (1, 80.0, math.nan))]
    verdicts = [d.verdict for d in compare_summaries(items)]
    assert verdicts == [Verdict.REGRESSION, Verdict.REGRESSION, Verdict.NO_CHANGE,
                        Verdict.REGRESSION]
    assert not compare_summaries(items)[3].statistics


def _clocked(rps: list[float], env: str, clock: str, usec: float) -> list[dict[str, Any]]:
    out = rows(rps, env)
    for row in out:
        row["server"] = {"usec_per_call": usec, "monotonic_clock": clock}
    return out


def test_usec_per_call_on_different_server_clocks_is_not_comparable() -> None:
    """commandstats times commands on the server's clock (INFO monotonic_clock): a TSC
    server against a clock_gettime one gives a ratio of two different clocks."""
    base = _clocked(noisy(100_000, 6, 0.01, 1), "a", "POSIX clock_gettime", 1.0)
    new = _clocked(noisy(100_000, 6, 0.01, 2), "b", "X86 TSC", 0.6)
    results, _ = compare(base, new, "all")
    by_metric = {r.metric: r.decision for r in results}
    usec = by_metric["server.usec_per_call"]
    assert usec.verdict is Verdict.NOT_COMPARABLE
    assert "X86 TSC" in usec.reason and "POSIX clock_gettime" in usec.reason
    assert by_metric["rps"].verdict is not Verdict.NOT_COMPARABLE
    same = _clocked(noisy(100_000, 6, 0.01, 3), "b", "POSIX clock_gettime", 0.6)
    results, _ = compare(base, same, "all")
    assert {r.metric: r.decision.verdict for r in results}["server.usec_per_call"] \
        is Verdict.IMPROVEMENT


def test_n_sides_are_judged_against_the_first_with_one_correction() -> None:
    """Three sides: B and C each against A, every result naming its side; the correction
    runs over both comparisons (more families: adjusted p-values never smaller than B's
    alone)."""
    base = rows(noisy(100_000, 8, 0.01, 1), "a")
    b = rows(noisy(85_000, 8, 0.01, 2), "b")
    c = rows(noisy(100_500, 8, 0.01, 3), "c")
    both = compare_sides({"A": base, "B": b, "C": c}, "all")
    assert {r.side for r in both} == {"B", "C"}
    verdicts = {(r.side, r.metric): r.decision.verdict for r in both}
    assert verdicts[("B", "rps")] is Verdict.REGRESSION
    assert verdicts[("C", "rps")] not in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
    alone = {r.metric: r.p_adjusted for r in compare_paired(base, c, "all")}
    for r in both:
        if r.side == "C":
            assert r.p_adjusted >= alone[r.metric] - 1e-12


def test_a_metric_in_one_run_of_eight_gets_no_verdict() -> None:
    """RSS per key exists only in runs whose seeding grew RSS by whole pages: one such run
    per side is no sample of the series, so the single-sample water line must not judge it
    (an A/A compare flagged a -13% "improvement" from one page)."""
    a, b = rows(noisy(100_000, 8, 0.01, 1), "a"), rows(noisy(100_000, 8, 0.01, 2), "b")
    a[6]["memory"] = {"rss_bytes_per_key": 979.0}
    b[6]["memory"] = {"rss_bytes_per_key": 848.0}
    (rss,) = [r for r in compare_paired(a, b, "all") if r.metric == "memory.rss_bytes_per_key"]
    assert rss.decision.verdict is Verdict.INSUFFICIENT_DATA, rss.decision
    assert "A 1 of 8, B 1 of 8" in rss.decision.reason
    (rps,) = [r for r in compare_paired(a, b, "all") if r.metric == "rps"]
    assert rps.decision.verdict is not Verdict.INSUFFICIENT_DATA


def test_a_metric_only_in_an_outlier_run_is_reported_not_a_crash(tmp_path: Path) -> None:
    """A metric present in one run of a side, when that run is also the side's stalled
    outlier on rps, leaves the side no judged value: the comparison names that, it does
    not crash on a mean of nothing (an A/A compare in CI died on exactly this)."""
    a, b = rows(noisy(100_000, 8, 0.01, 1), "a"), rows(noisy(100_000, 8, 0.01, 2), "b")
    a[6]["rps"] = 30_000.0  # a stalled run: the outlier screen drops it
    a[6]["memory"] = {"rss_bytes_per_key": 979.0}
    b[6]["memory"] = {"rss_bytes_per_key": 848.0}
    results = compare_paired(a, b, "all")
    (rss,) = [r for r in results if r.metric == "memory.rss_bytes_per_key"]
    assert rss.decision.verdict is Verdict.INSUFFICIENT_DATA, rss.decision
    assert rss.base.n == 0 and math.isnan(rss.change) and "n=0" in rss.base.text()
    (line,) = [x for x in markdown(results, [], "A", "B").splitlines() if "rss_bytes" in x]
    assert "| - (n=0) | - (n=0) | - | - | - | insufficient data" in line, line
