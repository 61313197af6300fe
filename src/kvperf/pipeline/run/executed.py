"""What the server executed, per command of the load, against what the tool counted (pure).

A plain command is one entry; a sequence (``SET … ; GET …`` mixes, MULTI/EXEC) one entry
per distinct command, each expected ``calls_per_sequence × sequences`` times, where the tool
counts one request per command of a sequence.
"""

from __future__ import annotations

from typing import TypedDict

from kvperf.config.commands import CommandSpec
from kvperf.server.stats import CommandStat


class Executed(TypedDict):
    """One command of the load: the server's calls, their mean time, and the calls the
    tool's count implies (None when the tool did not count)."""

    calls: int
    usec_per_call: float | None
    expected: int | None


def per_command(command: CommandSpec, commandstats: dict[str, CommandStat],
                requests: int | None) -> dict[str, Executed]:
    """``{name: {calls, usec_per_call, expected}}`` for every command the load sends;
    ``expected`` is None when the tool did not count its requests."""
    counts = command.calls_per_sequence
    per_sequence = sum(counts.values())
    sequences = requests / per_sequence if requests else None
    out: dict[str, Executed] = {}
    for name, count in counts.items():
        calls, usec = _stats_of(name, commandstats)
        out[name] = {"calls": calls, "usec_per_call": round(usec / calls, 4) if calls else None,
                     "expected": round(count * sequences) if sequences is not None else None}
    return out


def node_total(command: CommandSpec, node_calls: dict[str, int]) -> int:
    """One node's calls of the load's commands (subcommands included)."""
    stats = {name: CommandStat(calls=calls, usec=0) for name, calls in node_calls.items()}
    return sum(_stats_of(name, stats)[0] for name in command.calls_per_sequence)


def _stats_of(name: str, commandstats: dict[str, CommandStat]) -> tuple[int, int]:
    """Calls and usec of a command, its subcommands included (``client|list`` for CLIENT)."""
    calls = usec = 0
    for stat_name, stat in commandstats.items():
        if stat_name == name or stat_name.startswith(name + "|"):
            calls += stat.get("calls", 0)
            usec += stat.get("usec", 0)
    return calls, usec


def totals(commands: dict[str, Executed]) -> tuple[int, float | None]:
    """Calls of all the load's commands, and their call-weighted usec per call."""
    calls = sum(c["calls"] for c in commands.values())
    usec = sum(c["calls"] * (c["usec_per_call"] or 0.0) for c in commands.values())
    return calls, (round(usec / calls, 4) if calls else None)


def shortfall(commands: dict[str, Executed], min_ratio: float) -> str | None:
    """Why the server executed too few of some command (None when every one is there)."""
    for name, c in commands.items():
        if c["expected"] and c["calls"] < min_ratio * c["expected"]:
            return (f"the server executed {c['calls']} {name.upper()} calls but the tool's "
                    f"count implies {c['expected']}: the tool's count includes replies that "
                    "were not executions (redirects or errors)")
    return None


def executed_ratio(commands: dict[str, Executed]) -> float | None:
    """Lowest calls ÷ expected over the load's commands."""
    ratios = [c["calls"] / c["expected"] for c in commands.values() if c["expected"]]
    return round(min(ratios), 4) if ratios else None
