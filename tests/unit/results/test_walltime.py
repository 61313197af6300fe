"""Wall-time folding of a wall-time ``perf script`` (canned text in the format perf 6.1
prints with ``--show-switch-events -F comm,tid,time,event,ip,sym``)."""

from __future__ import annotations

import pytest

from kvperf.results.walltime import fold

SCRIPT = """\
valkey-server 100 10.000000:          cpu-clock/freq=1000/:
\t          5a1000 setCommand
\t          5a2000 call
\t          5a3000 aeMain

valkey-server 100 10.000100: sched:sched_switch:
\tffffffff821f5618 __schedule
\tffffffff8172d0b8 do_epoll_wait
\t          108f36 epoll_wait
\t           7d2b5 aeMain

valkey-server 100 10.000110: PERF_RECORD_SWITCH OUT
valkey-server 100 10.000610: PERF_RECORD_SWITCH IN
bio_close_file 101 10.000200: PERF_RECORD_SWITCH OUT preempt
bio_close_file 101 10.000300: PERF_RECORD_SWITCH IN
valkey-server 100 10.001000: PERF_RECORD_SWITCH OUT
"""


def test_on_cpu_samples_weigh_a_period_and_off_cpu_intervals_their_length() -> None:
    wall = fold(SCRIPT, frequency=1000)
    assert wall.on_cpu_us == pytest.approx(1000)  # one sample at 1 kHz
    assert wall.off_cpu_us == pytest.approx(500 + 100)  # the last OUT never came back in
    assert wall.render().splitlines() == [
        "bio_close_file;[preempted] 100",
        "valkey-server;aeMain;call;setCommand 1000",
        "valkey-server;aeMain;epoll_wait;do_epoll_wait;__schedule;[off-cpu] 500",
    ]


def test_off_cpu_time_is_named_by_the_user_function_it_blocked_in() -> None:
    top = fold(SCRIPT, frequency=1000).top()
    assert top == [{"name": "epoll_wait (off-CPU)", "self_pct": 31.25},
                   {"name": "[preempted] (off-CPU)", "self_pct": 6.25}]


def test_nothing_recorded_folds_to_nothing() -> None:
    wall = fold("", frequency=999)
    assert wall.render() == "" and wall.top() == []
