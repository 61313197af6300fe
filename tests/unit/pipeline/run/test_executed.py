"""Executed calls per command of the load against the tool's request count, and the share
of error replies a measurement may have."""

from __future__ import annotations

import pytest

from kvperf.config.commands import resolve_command
from kvperf.pipeline.run.executed import (
    MAX_ERROR_SHARE,
    Replies,
    error_verdict,
    executed_ratio,
    per_command,
    replies,
    shortfall,
    totals,
)

STATS = {"get": {"calls": 10_000, "usec": 5_000}, "set": {"calls": 1_000, "usec": 1_000},
         "client|setname": {"calls": 50, "usec": 50}, "ping": {"calls": 3, "usec": 1}}


def test_a_mix_is_checked_per_command() -> None:
    mix = resolve_command("MIX_READ_HEAVY")  # 1 SET : 10 GET per sequence
    commands = per_command(mix, STATS, requests=11_000)
    assert commands == {"set": {"calls": 1000, "usec_per_call": 1.0, "expected": 1000},
                        "get": {"calls": 10000, "usec_per_call": 0.5, "expected": 10000}}
    assert totals(commands) == (11_000, round(6_000 / 11_000, 4))
    assert executed_ratio(commands) == 1.0 and shortfall(commands, 0.98) is None


def test_a_missing_share_names_the_command() -> None:
    mix = resolve_command("MIX_50_50")
    commands = per_command(mix, STATS, requests=4_000)  # 2,000 SETs expected, 1,000 ran
    problem = shortfall(commands, 0.98)
    assert problem is not None and "1000 SET calls" in problem and "implies 2000" in problem
    assert executed_ratio(commands) == 0.5


def test_subcommands_count_for_their_command() -> None:
    commands = per_command(resolve_command("CLIENT SETNAME x"), STATS, requests=50)
    assert commands["client"]["calls"] == 50 and shortfall(commands, 0.98) is None


def test_without_a_request_count_nothing_is_expected() -> None:
    commands = per_command(resolve_command("GET"), STATS, requests=None)
    assert commands["get"]["expected"] is None and executed_ratio(commands) is None


ERRORS = {"debug": {"calls": 3, "usec": 9, "failed_calls": 3, "rejected_calls": 0},
          "lpush": {"calls": 0, "usec": 0, "failed_calls": 0, "rejected_calls": 50},
          "get": {"calls": 1_000, "usec": 500, "failed_calls": 0, "rejected_calls": 0},
          "client|setname": {"calls": 5, "usec": 5, "failed_calls": 5, "rejected_calls": 0}}


def test_error_replies_count_failed_and_rejected_calls_of_the_load_only() -> None:
    assert replies(["debug"], ERRORS, {"ERR": 3}) == Replies(3, 3, "debug", (("ERR", 3),))
    # rejected calls never ran: they are not in calls, so they are added to both sides
    assert replies(["lpush", "get"], ERRORS, {}) == Replies(1_050, 50, "lpush")
    assert replies(["client"], ERRORS, {}) == Replies(5, 5, "client|setname")
    assert replies(["get"], ERRORS, {"ERR": 8}).errors == 0  # the others' errors not counted
    assert replies(["set"], ERRORS, {}) == Replies(0, 0)


def test_every_reply_an_error_fails_naming_the_command_prefix_and_first_reply() -> None:
    found = replies(["debug"], ERRORS, {"ERR": 3})
    assert error_verdict(found, "ERR Error trying to load the RDB dump, check server logs.") \
        == ("3 of 3 calls of the load answered an error (100%; most: DEBUG; INFO errorstats: "
            "ERR ×3; first error reply: 'ERR Error trying to load the RDB dump, check server "
            "logs.'): beyond 1% error replies the numbers time errors, not the command")
    assert error_verdict(replies(["client"], ERRORS, {})) == (
        "5 of 5 calls of the load answered an error (100%; most: CLIENT SETNAME): beyond 1% "
        "error replies the numbers time errors, not the command")


@pytest.mark.parametrize(("errors", "fails"), [(0, False), (10, False), (11, True),
                                               (500, True), (1_000, True)])
def test_the_error_share_threshold_is_one_percent(errors: int, fails: bool) -> None:
    assert MAX_ERROR_SHARE == 0.01
    assert (error_verdict(Replies(1_000, errors, "get")) is not None) is fails
    assert error_verdict(Replies(0, 0)) is None  # nothing seen: the executed check's case
