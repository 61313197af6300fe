"""Executed calls per command of the load against the tool's request count."""

from __future__ import annotations

from kvperf.config.commands import resolve_command
from kvperf.pipeline.run.executed import executed_ratio, per_command, shortfall, totals

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
