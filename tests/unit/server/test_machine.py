"""Judging CPU and kernel facts for benchmarking, on canned /proc and /sys text."""

from __future__ import annotations

import errno

import pytest

from kvperf.server.machine import (
    CpuSample,
    bracketed,
    cpu_count_fact,
    cpu_sample,
    governor_fact,
    io_uring_fact,
    isolated_fact,
    load_fact,
    numa_fact,
    smt_fact,
    thp_fact,
    turbo_fact,
)


def test_one_usable_cpu_warns_that_server_and_client_share_it() -> None:
    alone = cpu_count_fact(8, (3,))
    assert (alone.status, alone.value) == ("warn", 8) and "share one CPU" in alone.hint
    fine = cpu_count_fact(2, (0, 1))
    assert (fine.status, fine.text) == ("ok", "2 (usable by kvperf: 0-1)")


def test_bracketed_choice() -> None:
    assert bracketed("always [madvise] never") == "madvise"
    assert bracketed("performance") == "performance"


def test_governor_unknown_without_cpufreq_performance_ok_else_warn() -> None:
    vm = governor_fact({})
    assert (vm.value, vm.text, vm.status) == (None, "unknown", "unknown")
    assert "cpufreq" in vm.hint
    tuned = governor_fact({0: "performance", 1: "performance"})
    assert (tuned.status, tuned.value) == ("ok", {"performance": [0, 1]})
    mixed = governor_fact({0: "powersave", 1: "powersave", 2: "performance"})
    assert mixed.status == "warn" and "cpupower frequency-set -g performance" in mixed.hint
    assert mixed.text == "powersave (CPU 0-1), performance (CPU 2)"
    assert mixed.value == {"powersave": [0, 1], "performance": [2]}
    assert governor_fact({0: "schedutil"}).value == {"schedutil": [0]}


@pytest.mark.parametrize(("no_turbo", "boost", "value", "status"), [
    ("1", None, False, "ok"), ("0", None, True, "warn"),
    (None, "1", True, "warn"), (None, "0", False, "ok"), (None, None, None, "unknown")])
def test_turbo(no_turbo: str | None, boost: str | None, value: bool | None, status: str) -> None:
    fact = turbo_fact(no_turbo, boost)
    assert (fact.value, fact.status) == (value, status)


def test_turbo_hint_names_the_knob_that_exists() -> None:
    assert "intel_pstate/no_turbo" in turbo_fact("0", None).hint
    assert "cpufreq/boost" in turbo_fact(None, "1").hint


def test_smt_on_names_sibling_pairs_off_or_unsupported_is_fine() -> None:
    on = smt_fact("on", "1", ["0,2", "1,3", "0,2", "1,3"])
    assert (on.status, on.value, on.text) == ("warn", True, "on (siblings 0,2 1,3)")
    assert "different cores" in on.hint
    assert smt_fact("notsupported", "0", ["0", "1"]).text == "not supported"
    off = smt_fact("off", "0", ["0", "1"])
    assert (off.status, off.value) == ("ok", False)
    assert smt_fact(None, None, []).status == "unknown"


def test_isolated_cpus() -> None:
    small = isolated_fact("", "(null)", 2)
    assert (small.status, small.value, small.text) == ("ok", [], "none")
    big = isolated_fact("", None, 16)
    assert big.status == "warn" and "isolcpus=" in big.hint
    some = isolated_fact("2-3", "2-3", 4)
    assert (some.status, some.value, some.text) == ("ok", [2, 3], "2-3 (nohz_full 2-3)")
    assert isolated_fact(None, None, 4).status == "unknown"


def test_numa_one_node_ok_two_nodes_warn() -> None:
    one = numa_fact({0: "0-1"})
    assert (one.status, one.value, one.text) == ("ok", {"node0": [0, 1]},
                                                 "1 node (node0: CPU 0-1)")
    two = numa_fact({0: "0-3", 1: "4-7"})
    assert two.status == "warn" and two.value == {"node0": [0, 1, 2, 3], "node1": [4, 5, 6, 7]}
    assert "in one node" in two.hint
    memory_only = numa_fact({0: "0-3", 1: ""})  # a CPU-less memory node
    assert memory_only.status == "ok"
    assert numa_fact(None).status == "unknown"


STAT_BEFORE = "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\n"
STAT_AFTER = "cpu  160 0 70 900 20 0 0 50 0 0\ncpu0 80 0 35 450 10 0 0 25 0 0\n"


def test_cpu_sample_busy_and_steal_by_hand() -> None:
    # deltas: user 60, system 20, idle 100, iowait 10, steal 10 → total 200;
    # busy = (200 - 110 - 10) / 200 = 0.4, steal = 10 / 200 = 0.05
    sample = cpu_sample(STAT_BEFORE, STAT_AFTER, 0.5)
    assert sample == CpuSample(busy=0.4, steal=0.05, seconds=0.5)
    assert cpu_sample(STAT_BEFORE, STAT_BEFORE, 0.5) is None  # no ticks elapsed
    assert cpu_sample("intr 1 2 3", STAT_AFTER, 0.5) is None


def test_quiet_machine_is_ok_busy_or_stolen_time_warns() -> None:
    quiet = load_fact("0.05 0.10 0.08 1/120 999", 2, CpuSample(0.01, 0.0, 0.5))
    assert quiet.status == "ok"
    assert quiet.value == {"load_average": [0.05, 0.10, 0.08], "cpus": 2, "busy_percent": 1.0,
                           "steal_percent": 0.0, "sample_seconds": 0.5}
    loaded = load_fact("1.50 0.80 0.20 3/120 999", 2, None)
    assert loaded.status == "warn" and "1-minute load 1.5 on 2 CPUs" in loaded.hint
    busy = load_fact("0.00 0.00 0.00 1/120 9", 2, CpuSample(0.4, 0.0, 0.5))
    assert busy.status == "warn" and "40% busy" in busy.hint
    stolen = load_fact("0.00 0.00 0.00 1/120 9", 2, CpuSample(0.0, 0.05, 0.5))
    assert stolen.status == "warn" and "stole 5%" in stolen.hint
    assert load_fact("3.0 0 0 1/1 1", 64, None).status == "ok"  # 3 busy CPUs of 64
    assert load_fact(None, 2, None).status == "unknown"


def test_transparent_huge_pages() -> None:
    assert thp_fact("always [madvise] never").status == "ok"
    always = thp_fact("[always] madvise never")
    assert (always.status, always.value) == ("warn", "always") and "madvise" in always.hint
    assert thp_fact(None).status == "unknown"


def test_io_uring_allowed_refused_absent_or_unprobed() -> None:
    allowed = io_uring_fact("0", 0)
    assert allowed.status == "ok"
    assert allowed.value == {"allowed": True, "io_uring_disabled": 0, "probe": "ok"}
    refused = io_uring_fact("2\n", errno.EPERM)
    assert refused.status == "warn" and "io_uring_disabled=0" in refused.hint
    assert refused.value == {"allowed": False, "io_uring_disabled": 2, "probe": "EPERM"}
    assert refused.text == "refused (EPERM, io_uring_disabled=2)"
    absent = io_uring_fact(None, errno.ENOSYS)
    assert absent.status == "missing" and absent.value["io_uring_disabled"] is None
    unprobed = io_uring_fact("0", None)
    assert unprobed.status == "unknown" and unprobed.value["allowed"] is None
