"""Rate sweeps on real servers (valkey-server 8.0.1, under SCHED_FIFO): SET P=1's knee lies
below its closed-loop saturation and its p99 rises with the rate; a 2 ms injected service
time (DEBUG SLEEP) makes one queue with saturation ≈ 1/S, a mean wait between M/D/1 and
Valkey's batched-reply queue (within 20%) and the knee where that model puts it; compare
judges two sides' knees by the one verdict rule: an A/A never flags one, service time
injected on one side (~100 µs of spin in setCommand, one commit on the fixture's base)
reads "regression".

- SET P=1: a closed-loop trial, then ten open-loop points; the knee lies below the
  closed-loop saturation rps, the open loop keeps its rate (within 5%) at every point up to
  95% with under 1% of its sends held back by kvload itself (beyond those due while the
  hypervisor held its core), and the p99 curve rises with
  the rate (the top points' median p99 at least twice the lowest ones', and overload at
  100% far above the lowest point).
- Injected service time: every request is ``DEBUG SLEEP 0.002`` on the server's one thread
  (one queue, service time S), so saturation ≈ 1/S, the knee moves down to a few hundred
  requests/s, and the mean waiting time at a moderate utilization ρ is what queueing theory
  predicts for Poisson arrivals (kvload --arrivals poisson) and a deterministic service time:
  M/D/1, ρ·S/(2(1−ρ)) — with one correction: Valkey writes the replies of every request
  it read in one event-loop iteration together, in beforeSleep, so a request waits for the
  later requests of its batch too (a gated M/D/1, simulated here; plain M/D/1 is its lower
  bound, ~25-35% below at ρ = 0.5-0.6). At ρ ≈ 0.5 and 0.6 the measured wait lies within
  20% of the two: above 0.8 × M/D/1 at the command's own time S, below 1.2 × the gated queue
  at the server's whole time per request (1 / saturation: reading and replying too).
- A fixed rate far above saturation (2,000,000/s) reports the overload: about the closed
  loop's rate achieved, the lead-in's backlog in its corrected latency (not "no requests").

The timed sweeps run kvperf under SCHED_FIFO (``chrt -f``: the server and kvload inherit
it): on this shared 2-core machine other tenants' processes otherwise preempt the server for
milliseconds, the very tail a sweep measures (p99 at 50% of saturation swung 2-6 ms between
identical runs without it, M/D/1 ratios 0.8-5.8; with it 1.1-1.4, stable). The kernel's RT
throttling keeps 5% of each CPU for everyone else.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kvperf.core.cpus import parse_cpu_list
from tests.fixtures.valkey_repo import _set_spin as set_spin
from tests.fixtures.valkey_steps import _commit as commit
from tests.helpers import KVPERF, require_binary, run_kvperf, write_config

# alone: every timed sweep (the model's own simulation and the overload point time
# nothing: the parallel lane)
pytestmark = [pytest.mark.integration]

VALKEY = "/usr/bin/valkey-server"
SLEEP_S = 0.002
SERVICE_SPIN = 400_000  # setCommand's spin iterations: ~100 µs of server time per SET


def run_rt(cwd: Path, *args: str, timeout: float = 120,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """kvperf under SCHED_FIFO priority 10 (module doc); a missing chrt fails."""
    chrt = require_binary("chrt")
    return subprocess.run([chrt, "-f", "10", str(KVPERF), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def sweep_rows(results: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = json.loads((results / "metrics.json").read_text())
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows]
    saturation = [r for r in rows if r["sweep"]["role"] == "saturation"]
    points = sorted((r for r in rows if r["sweep"]["role"] == "point"),
                    key=lambda r: r["sweep"]["index"])
    assert len(saturation) == 1
    return saturation[0], points


def corrected(row: dict[str, Any], key: str) -> float:
    return float(row["client"]["latency_ms"]["corrected"][key])


@pytest.mark.alone
@pytest.mark.usefixtures("no_strays")
def test_a_sweep_of_valkey_set_finds_a_knee_below_saturation(tmp_path: Path) -> None:
    write_config(tmp_path, [{"commands": ["SET"], "data_sizes": 64, "pipelines": 1,
                             "clients": 50, "duration": 3, "warmup": 1,
                             "server_cpu_range": "0", "client_cpu_range": "1"}])
    done = run_rt(tmp_path, "run", "--config", "config.json", "--server-bin", VALKEY,
                  "--rate-sweep", "--point-seconds", "1", "--label", "sweep",
                  "--gate", "SET.rps>=30000")
    assert done.returncode == 0, done.stdout + done.stderr
    # the gate judges the closed-loop trial only, not the points (10% is far below it)
    gates = json.loads((tmp_path / "results" / "sweep" / "gates.json").read_text())["gates"]
    assert [(g["series"], g["passed"], g["runs"]) for g in gates] == [
        ("SET d=64 P=1 c=50", True, 1)], gates
    sat, points = sweep_rows(tmp_path / "results" / "sweep")
    saturation = sat["rps"]
    assert_sweep_records(tmp_path / "results" / "sweep", sat, points)
    assert_open_loop_kept_its_rate(points)
    assert_p99_rises_with_the_rate(points)
    assert_knee_below_saturation(done.stdout, tmp_path / "results" / "sweep", saturation)


def assert_sweep_records(results: Path, sat: dict[str, Any],
                         points: list[dict[str, Any]]) -> None:
    """The saturation row and the ten points' ``sweep`` records, series and histograms."""
    saturation = sat["rps"]
    assert sat["server_version"] == "valkey-8.0.1" and sat["config_set"] is None
    assert [p["sweep"]["point"] for p in points] == [
        "10%", "30%", "50%", "60%", "70%", "80%", "85%", "90%", "95%", "100%"]
    for p in points:
        record = p["sweep"]
        assert record["id"] == sat["trial_id"] == sat["sweep"]["id"]
        assert record["target_rps"] == pytest.approx(saturation * record["percent"] / 100)
        assert record["saturation_rps"] == pytest.approx(saturation)
        assert record["arrivals"] == "poisson"
        assert p["config_set"] == {"rate": record["point"]} and p["duration"] == 1
        assert p["client"]["mode"] == "open" and p["histogram_file"]
        assert (results / p["histogram_file"]).is_file()
    assert len({p["trial_id"] for p in points} | {sat["trial_id"]}) == 11


def assert_open_loop_kept_its_rate(points: list[dict[str, Any]]) -> None:
    # The open loop keeps its rate (within 5%) at every point up to 95% of the closed loop's
    # rate (nine points), each judged, saturated sides too: under SCHED_FIFO kvload reaches
    # ≥ 0.99 of the asked rate up to 95% with either loop on one core (docs/PERFORMANCE.md
    # "Open loop: does it keep up"). A point marked client-saturated (⚠ client) still keeps its
    # rate: late sends go out late and count from their intended time. A client that cannot
    # keep up fails here (a kvload burning 15 µs per open-loop send: 50-95% achieved 9-33k of
    # 68-129k rps); earlier exemptions of client- and server-saturated points let it pass.
    #
    # kvload's own lateness (`late_own`: sends more than 1 ms late although their
    # connection's reply was in) stays under 1% of each point's requests: a kvload that
    # oversleeps its timer by 2 ms still made its rates but held back 1.4-39% of its sends.
    # Sends due while the hypervisor held the client's core are the host's lateness, not
    # kvload's: the target rate × the core's stolen seconds (the row's interference record)
    # is allowed on top. On an EPYC VM the 10% point (8.1k rps) had 101 and 119-156 of them
    # in 1 s with 20 ms stolen from kvload's SCHED_FIFO core (0.02 s × 8.2k = 164).
    #
    # The ceiling above kvload: 50 connections with one request each carry no more than the
    # closed loop did, so at 85-95% a few seconds of a slower host put the target above
    # what the round trip allows (a CI run: 95% achieved 136k of 147k; here 85-95% held at
    # ~128k while the server's core was 0.94 busy at 7.4 µs a request against 5.8 µs in the
    # next run, with no steal and no foreign process; 100% then made 161k). Every
    # connection is then busy at its intended time, and its send waits for the reply. Such
    # a short point is the system's, not kvload's, when kvload shows it: its core not
    # saturated (a kvload too busy to read replies counts them in late as they are read:
    # one burning 15 µs a send was saturated from 30% on) and its own lateness under 1%.
    # Up to 50% the round trip has twice the headroom: every point there keeps its rate.
    kept = [p for p in points if p["sweep"]["percent"] <= 95]
    assert len(kept) == 9, [p["sweep"]["point"] for p in kept]
    own = [(p["sweep"]["point"], p["client"]["late_own"], p["client"]["late"]) for p in kept
           if p["client"]["late_own"] > 0.01 * p["rps"] * p["duration"]
           + p["sweep"]["target_rps"] * stolen(p, ("client",))]
    assert not own, own
    short = [(p["sweep"]["point"], round(p["rps"]), round(p["sweep"]["target_rps"]),
              p["client_saturated"]) for p in kept
             if p["rps"] != pytest.approx(p["sweep"]["target_rps"], rel=0.05)
             and (p["sweep"]["percent"] <= 50 or p["client_saturated"])]
    assert not short, short


def stolen(row: dict[str, Any], roles: tuple[str, ...] = ("server", "client")) -> float:
    """Seconds the hypervisor stole during the row's trial from the pinned core of ``roles``
    that lost most."""
    pinning = row["env"]["pinning"]
    cpus = {cpu for role in roles for cpu in parse_cpu_list(pinning[role])}
    return max(float(c["steal_s"]) for c in row["interference"]["cores"] if c["cpu"] in cpus)


def assert_p99_rises_with_the_rate(points: list[dict[str, Any]]) -> None:
    # p99 rises with the rate: the median p99 of the top four points (85-100%) is at least
    # twice that of the lowest three (10-50%, unless stolen: below) — medians, so one
    # stalled second does not decide — and overload at the top (its p99 3× the least of
    # those three). Over every point, client-saturated ones too: the corrected latency is
    # what users see and what the knee rule reads, and the table marks those points
    # (⚠ client). On this VM kvload's open loop costs ~25 µs of kernel time per
    # request at 10% (a timer armed per send, the server's idle core woken per request) and
    # saturates its core from 60-70% on, at 95-100% too in 3 of 5 runs here (a rank
    # correlation over the points it kept up with then had 3 or 4 low points to rank).
    #
    # A point that lost more than 1% of its time to the hypervisor on the server's or the
    # client's core has the host's p99, not the queue's: every request due while the core
    # was held waits for it, and past 1% that is the whole tail (an EPYC VM: the 10% and
    # 30% points read p99 9 and 16 ms in a CI run, against ~0.2 ms unstolen). The low
    # median takes the first three points up to 70% that lost no more (steal_s counts 10 ms
    # ticks: one tick in a 1 s point is common there and leaves p99 alone).
    quiet = [p for p in points if p["sweep"]["percent"] <= 70
             and stolen(p) <= 0.01 * p["duration"]][:3]
    every = [(p["sweep"]["point"], corrected(p, "p99"), stolen(p)) for p in points]
    assert quiet, f"every point up to 70% lost more than 1% to steal: {every}"
    low = float(np.median([corrected(p, "p99") for p in quiet]))
    high = float(np.median([corrected(p, "p99") for p in points[-4:]]))
    assert high >= 2 * low, every
    # and the top point overloads: 3× the least of those quiet points (the 10% and 30%
    # points once read 11.5 and 1.9 ms with 80-140 ms stolen, the 100% point 3.7 ms)
    assert corrected(points[-1], "p99") >= 3 * min(corrected(p, "p99") for p in quiet), every


def assert_knee_below_saturation(stdout: str, results: Path, saturation: float) -> None:
    # the knee (table and markdown) lies below the closed-loop saturation rps
    assert "Rate sweep · SET d=64 P=1 c=50 · poisson arrivals" in stdout
    text = (results / "rate_sweep.md").read_text()
    knee_line = next(line for line in text.splitlines() if line.startswith("knee: "))
    head = knee_line.split(";")[0]  # "knee: 55,312 rps at 50%"
    assert "below the lowest rate" not in head and "≥" not in head, knee_line
    knee_rps = float(knee_line.split()[1].replace(",", ""))
    assert 0 < knee_rps < saturation, knee_line
    marked = [line for line in text.splitlines() if "◀ knee" in line]
    assert len(marked) == 1 and marked[0].split("|")[3].strip() == f"{knee_rps:,.0f}"


def gated_md1(rho: float, service: float, n: int = 100_000, seed: int = 1) -> np.ndarray:
    """Sojourn times of Poisson arrivals at rate ρ/S on one server with a deterministic
    service time S that, like Valkey's event loop, takes every request waiting when it
    looks (an iteration) and answers them all when the last is done."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(service / rho, n))
    sojourn = np.empty(n)
    i, t = 0, 0.0
    while i < n:
        t = max(t, arrivals[i])
        j = int(np.searchsorted(arrivals, t, side="right"))
        end = t + (j - i) * service
        sojourn[i:j] = end - arrivals[i:j]
        i, t = j, end
    return sojourn


def test_the_gated_model_reduces_to_md1_at_low_load_and_exceeds_it_above() -> None:
    """The simulation itself: M/D/1 (Pollaczek–Khinchine) is its lower bound."""
    for rho, low, high in ((0.1, 1.0, 1.2), (0.5, 1.2, 1.45), (0.6, 1.25, 1.5)):
        wait = gated_md1(rho, 1.0).mean() - 1.0
        assert low <= wait / (rho / (2 * (1 - rho))) <= high, (rho, wait)


@pytest.mark.alone
@pytest.mark.usefixtures("no_strays")
def test_injected_service_time_moves_the_knee_as_queueing_predicts(tmp_path: Path) -> None:
    write_config(tmp_path, [{"commands": [f"DEBUG SLEEP {SLEEP_S}"], "clients": 200,
                             "duration": 3, "warmup": 0,
                             "custom-server-configs": {"enable-debug-command": "local"}}])
    done = run_rt(tmp_path, "run", "--config", "config.json", "--server-bin", VALKEY,
                  "--rate-sweep", "--rate-steps", "10,30,50,60,90", "--point-seconds", "4",
                  "--label", "slow")
    assert done.returncode == 0, done.stdout + done.stderr
    sat, points = sweep_rows(tmp_path / "results" / "slow")

    # one queue: saturation ≈ 1/S, S the server's own time per DEBUG call
    service = sat["server"]["usec_per_call"] / 1e6
    assert SLEEP_S <= service <= 1.15 * SLEEP_S
    assert 0.85 / service <= sat["rps"] <= 1.02 / service, (sat["rps"], service)

    # the model at each point's measured utilization (sojourn times, ms). The queue's
    # service time lies between the command's own (usec_per_call) and the server's whole
    # time per request, its loop's reading, parsing and replying too: 1 / the closed loop's
    # rate. The rest was 7-15% of a request on an EPYC VM (saturation 422-441 rps against
    # 1 / 2.07 ms = 483), and the gated model at the command's time alone predicted
    # 1.61-1.71 ms of waiting at 60% where 1.95-2.28 ms were measured (2.40-2.80 at the
    # whole time); earlier hosts measured down to M/D/1 at the command's time. So the lower
    # bound is M/D/1 at the command's time, the upper the gated queue at the whole time.
    per_request = 1 / sat["rps"]
    model = [gated_md1(p["rps"] * per_request, per_request) * 1e3 for p in points]
    wait = [float(m.mean()) - per_request * 1e3 for m in model]

    # mean waiting time at ρ ≈ 0.5 and 0.6: the low-rate point is the no-wait baseline
    # (network and wakeups), itself corrected by its own small predicted wait
    base = points[0]
    base_ms = corrected(base, "mean") - wait[0]
    for i in (2, 3):
        row, rho = points[i], points[i]["rps"] * service
        waited = corrected(row, "mean") - base_ms
        md1 = rho * service / (2 * (1 - rho)) * 1e3
        assert 0.4 <= rho <= 0.7, rho
        # between the two queues within 20%: plain M/D/1 (replies sent as each request
        # finishes) and the gated one (a loop pass's replies sent together, Valkey's way);
        # runs here landed on either end (0.88 ms against M/D/1's 0.89 once, 1.1–1.7× it
        # other times), so each bound is asserted, not one model's value
        assert 0.8 * md1 <= waited <= 1.2 * wait[i], (row["sweep"]["point"], rho, waited,
                                                      md1, wait[i])

    # the knee moved down to the queue's: below saturation, where the model puts it (the
    # same rule on the model's p99s at the measured rates, plus the network and wakeup
    # tail of the lowest point), within one step
    text = (tmp_path / "results" / "slow" / "rate_sweep.md").read_text()
    marked = [line.split("|")[1].strip() for line in text.splitlines() if "◀ knee" in line]
    labels = [p["sweep"]["point"] for p in points]
    assert len(marked) == 1 and labels.index(marked[0]) < len(labels) - 1, text
    floor = corrected(base, "p99") - float(np.percentile(model[0], 99))
    model_p99 = [float(np.percentile(m, 99)) + floor for m in model]
    baseline = min(m for m, p in zip(model_p99, points, strict=True)
                   if p["sweep"]["percent"] <= 30)
    breaks = [m > 2 * baseline for m in model_p99]
    model_knee = next(i for i, b in enumerate(breaks)
                      if b and (i + 1 == len(breaks) or breaks[i + 1])) - 1
    assert abs(labels.index(marked[0]) - model_knee) <= 1, (marked, model_p99)


def compare_knees(tmp_path: Path, label: str, sides: list[str], runs: int,
                  env: dict[str, str] | None = None) -> str:
    """`compare --rate-sweep` of two sides (`sides`: their arguments) with 1 s points over
    ``runs`` rounds, checked for both sides' curves and paired trials; returns the knee
    table's row."""
    write_config(tmp_path, [{"commands": ["SET"], "data_sizes": 64, "pipelines": 1,
                             "clients": 50, "duration": 1, "warmup": 0,
                             "server_cpu_range": "0", "client_cpu_range": "1"}])
    done = run_rt(tmp_path, "compare", *sides, "--config", "config.json", "--rate-sweep",
                  "--rate-steps", "30,70,100", "--point-seconds", "1", "--runs", str(runs),
                  "--label", label, timeout=900, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Rate sweep knees: B " in " ".join(done.stdout.split()), done.stdout
    results = tmp_path / "results" / label
    trials = []
    for side in ("A", "B"):
        rows: list[dict[str, Any]] = json.loads((results / side / "metrics.json").read_text())
        assert len(rows) == 4 * runs and {r["ab_schedule"] for r in rows} == {"alternate"}
        assert "| 70% |" in (results / side / "rate_sweep.md").read_text()
        trials.append([r["trial_id"] for r in rows])
    assert trials[0] == trials[1]
    knees = (results / "rate_sweep_knees.md").read_text()
    row = next(line for line in knees.splitlines() if line.startswith("| SET d=64 P=1 c=50"))
    assert row.count("|") == 6 and " – " not in row, row
    return row


@pytest.mark.alone
@pytest.mark.usefixtures("no_strays")
def test_compare_of_two_identical_servers_flags_no_knee(tmp_path: Path) -> None:
    """An A/A: the same binary on both sides, the same points paired by round, the knees
    judged by the one verdict rule into the knee table — never a regression or an
    improvement (the open loop keeps its rate on both sides, so neither knee is the
    client's). 4 rounds, not the A/B's 5: the rule's false-alarm rate does not depend on the
    run count (as test_builds.py's A/As), and a round is 8 s of trials in the alone lane. Not
    3: fed the A/B's sides (B's knee 0.07-0.08× A's), 3 rounds read "unstable" (a paired CV
    of 52%: A's knee moved between points), so this assertion could no longer fail; 4 read
    "regression"."""
    row = compare_knees(tmp_path, "aa", ["--server-bin", VALKEY, "--server-bin", VALKEY], 4)
    assert "regression" not in row and "improvement" not in row, row
    assert any(v in row for v in ("no change", "inconclusive", "unstable")), row


def slow_set_repo(tmp_path: Path, valkey_repo: Path) -> Path:
    """A clone of the fixture repository with one commit on ``base``, tagged ``set-100us``:
    setCommand spins SERVICE_SPIN iterations per call (the fixture's own spin loop)."""
    repo = tmp_path / "valkey"
    subprocess.run(["git", "clone", "-q", "--shared", str(valkey_repo), str(repo)],
                   check=True, capture_output=True, timeout=120)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "base"], check=True)
    set_spin(repo / "src" / "t_string.c", SERVICE_SPIN)
    commit(repo, f"setCommand: spin {SERVICE_SPIN} iterations per call",
           "2025-05-04T12:00:00Z", "set-100us")
    return repo


@pytest.mark.alone
@pytest.mark.usefixtures("no_strays")
def test_compare_reads_injected_service_time_as_a_knee_regression(
        tmp_path: Path, valkey_repo: Path, build_cache: Path) -> None:
    """An A/B: the fixture's base against one commit whose only change is a spin loop in
    setCommand of ~100 µs per SET (SERVICE_SPIN; the steps fixture's 40,000 iterations cost
    ~10 µs here, and B's knee then fell level with A's: A's p99 broke at 70% in 3 of 5
    rounds). B's saturation, and with it its knee, falls far below A's — "regression"."""
    repo = slow_set_repo(tmp_path, valkey_repo)
    row = compare_knees(tmp_path, "ab", ["base", "set-100us", "--repo", str(repo)], 5,
                        env={"KVPERF_BUILD_CACHE": str(build_cache)})
    assert "regression" in row, row


@pytest.mark.usefixtures("no_strays")
def test_a_fixed_rate_far_above_saturation_reports_the_overload(tmp_path: Path) -> None:
    """2,000,000 requests/s asked of SET P=1 (a closed loop of 20-160k here): the point
    completes what the server serves, its latency counted from the intended send times,
    so the backlog of its 0.5 s lead-in is in it (at least 0.5 s × (1 − achieved/target)
    at the window's start). A send counted only when intended in the window left such a
    point with no request at all ("kvload completed no requests", the trial failed): the
    whole window went to the lead-in's backlog. Its neighbour at 5000/s keeps its rate."""
    write_config(tmp_path, [{"commands": ["SET"], "data_sizes": 64, "pipelines": 1,
                             "clients": 50, "duration": 1, "warmup": 0,
                             "server_cpu_range": "0", "client_cpu_range": "1"}])
    done = run_kvperf("run", "--config", "config.json", "--server-bin", VALKEY,
                      "--rate-sweep", "--rates", "5000,2000000", "--point-seconds", "1",
                      "--label", "over", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    _, (low, over) = sweep_rows(tmp_path / "results" / "over")
    assert low["rps"] == pytest.approx(5000, rel=0.05), low["rps"]
    assert over["sweep"]["target_rps"] == 2_000_000
    assert 0 < over["rps"] < 0.5 * 2_000_000, over["rps"]
    assert over["client"]["unsent"] > 0, over["client"]
    behind = 0.5 * (1 - over["rps"] / 2_000_000) * 1000  # ms
    assert corrected(over, "p50") >= behind, (corrected(over, "p50"), behind)
    assert corrected(over, "p50") > 10 * over["client"]["latency_ms"]["service"]["p50"]
