"""The ``disturbed`` verdict: pinned trials by their worst core, unpinned by all watched
cores, steal alike; the cause names the share, the core and the process."""

from __future__ import annotations

from kvperf.results.interference import (
    DISTURBED_SHARE,
    footnote,
    interference_record,
    short_command,
)
from kvperf.server.interference import CoreUse, Culprit, Sampled


def _sampled(foreign: tuple[float, float], pinned: bool = True,
             steal: tuple[float, float] = (0.0, 0.0), wall: float = 1.0) -> Sampled:
    cores = tuple(CoreUse(cpu, 1.0, 1.0 - f, f, s)
                  for cpu, (f, s) in enumerate(zip(foreign, steal, strict=True)))
    return Sampled(wall, 5, pinned, cores, (Culprit(1234, "python3 hog.py", max(foreign)),),
                   {"server": 40, "client": 3})


def test_a_hog_on_the_server_core_disturbs_a_pinned_trial_and_is_named() -> None:
    record = interference_record(_sampled((0.62, 0.0)), 0.25, client_saturated=False)
    assert record["disturbed"] and record["foreign_share"] == 0.62
    assert record["cause"] == "62% of cpu0 went to pid 1234 (python3 hog.py)"
    assert footnote(record).startswith("! disturbed: 62% of cpu0 went to pid 1234 "
                                       "(python3 hog.py) — quiet the machine")
    assert record["watched"] == "0-1" and record["involuntary_switches"]["server"] == 40
    assert record["attempt"] == 1 and not record["excluded"]


def test_a_quiet_trial_is_not_disturbed() -> None:
    record = interference_record(_sampled((0.02, 0.01)), 0.25)
    assert not record["disturbed"] and record["cause"] is None
    at_threshold = interference_record(_sampled((DISTURBED_SHARE, 0.0)), 0.25)
    assert not at_threshold["disturbed"]  # more than the threshold disturbs


def test_an_unpinned_trial_is_judged_over_all_its_cores() -> None:
    """Its threads move between cores within a sample: 12% on one core of two is 6%."""
    record = interference_record(_sampled((0.12, 0.0), pinned=False), 0.25)
    assert record["foreign_share"] == 0.06 and not record["disturbed"]
    busy = interference_record(_sampled((0.3, 0.2), pinned=False), 0.25)
    assert busy["disturbed"] and busy["cause"] == (
        "25% of cpus 0-1 went to pid 1234 (python3 hog.py)")


def test_steal_disturbs_too() -> None:
    record = interference_record(_sampled((0.0, 0.0), steal=(0.0, 0.3)), 0.25)
    assert record["disturbed"]
    assert record["cause"] == "30% of cpu1 was stolen by the hypervisor"


def test_no_threshold_judges_nothing() -> None:
    """Instruction counts and memory: the sampling is recorded, never a verdict."""
    record = interference_record(_sampled((0.9, 0.0)), 0.25, threshold=None)
    assert not record["disturbed"] and record["foreign_share"] == 0.9


def test_a_command_line_is_shown_by_program_name_and_cut_in_the_middle() -> None:
    assert short_command("/usr/bin/python3 hog.py") == "python3 hog.py"
    long = "/venv/bin/python " + "/tmp/" + "x" * 120 + "/hog.py"
    cut = short_command(long)
    assert len(cut) == 80 and cut.startswith("python /tmp/xx") and cut.endswith("x/hog.py")
    assert "…" in cut


def test_a_stage_too_short_for_the_tick_counts_is_not_judged() -> None:
    """/proc's 10 ms ticks: a 0.1 s stage's shares move by 10% a tick."""
    record = interference_record(_sampled((0.62, 0.0), wall=0.1), 0.25)
    assert not record["disturbed"] and record["cause"] is None
    assert record["foreign_share"] > DISTURBED_SHARE  # recorded all the same
