"""When perf can attach and record kernel frames (pure decisions)."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.perf_record import (
    events,
    kernel_stacks_note,
    paranoid_level,
    unavailable,
    wall_time_unavailable,
)


def test_kernel_stacks_need_root_or_paranoid_at_most_1() -> None:
    assert kernel_stacks_note(2, root=True) is None
    assert kernel_stacks_note(1, root=False) is None
    note = kernel_stacks_note(2, root=False)
    assert note and "user-space stacks only" in note
    assert "sysctl kernel.perf_event_paranoid=1" in note


def test_paranoid_above_2_forbids_attaching_and_names_the_sysctl() -> None:
    reason = unavailable(3, root=False)
    assert reason and "kernel.perf_event_paranoid is 3" in reason
    assert "sysctl kernel.perf_event_paranoid=2" in reason
    assert unavailable(3, root=True) is None
    assert unavailable(2, root=False) is None


def test_paranoid_level_is_read_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "perf_event_paranoid"
    path.write_text("2\n")
    assert paranoid_level(path) == 2
    assert paranoid_level(tmp_path / "absent") is None


def test_events_cpu_clock_at_its_own_frequency_and_every_switch_in_wall_time() -> None:
    assert events(999, kernel=True, wall_time=False) == ["-e", "cpu-clock/freq=999/"]
    assert events(99, kernel=False, wall_time=False) == ["-e", "cpu-clock/freq=99/u"]
    # a global -F would sample the tracepoint too, and lose most switches' stacks
    assert events(999, kernel=True, wall_time=True) == [
        "-e", "cpu-clock/freq=999/", "-e", "sched:sched_switch", "--switch-events"]


def test_wall_time_needs_root_or_paranoid_minus_1() -> None:
    assert wall_time_unavailable(2, root=True) is None
    assert wall_time_unavailable(-1, root=False) is None
    reason = wall_time_unavailable(1, root=False)
    assert reason is not None and "sched:sched_switch" in reason and "(it is 1)" in reason
