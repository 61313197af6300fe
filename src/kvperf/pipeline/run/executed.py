"""What the server executed, per command of the load, against what the tool counted, and
how many of its replies were errors (pure).

A plain command is one entry; a sequence (``SET … ; GET …`` mixes, MULTI/EXEC) one entry
per distinct command, each expected ``calls_per_sequence × sequences`` times, where the tool
counts one request per command of a sequence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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


MAX_ERROR_SHARE = 0.01  # error replies beyond this share of the load's calls fail the test


@dataclass(frozen=True)
class Replies:
    """How the server answered the load's commands in the measure stage (INFO commandstats
    and errorstats): calls it saw (run or rejected), error replies among them, the command
    with the most, and the error replies of the stage by prefix (``ERR`` …)."""

    calls: int
    errors: int
    worst: str | None = None
    prefixes: tuple[tuple[str, int], ...] = ()


def replies(names: Iterable[str], commandstats: dict[str, CommandStat],
            errorstats: dict[str, int]) -> Replies:
    """The load's commands (``names``, subcommands included) as the server answered them."""
    calls = errors = 0
    per_command: dict[str, int] = {}
    for name in names:
        for stat_name, stat in commandstats.items():
            if stat_name == name or stat_name.startswith(name + "|"):
                failed = stat.get("failed_calls", 0) + stat.get("rejected_calls", 0)
                calls += stat.get("calls", 0) + stat.get("rejected_calls", 0)
                errors += failed
                per_command[stat_name] = per_command.get(stat_name, 0) + failed
    worst = max(per_command, key=lambda n: per_command[n]) if errors else None
    prefixes = tuple(sorted(errorstats.items(), key=lambda item: -item[1]))
    return Replies(calls, errors, worst, prefixes)


def error_verdict(found: Replies, first: str | None = None,
                  max_share: float = MAX_ERROR_SHARE) -> str | None:
    """Why the measurement cannot be trusted: more than ``max_share`` of the load's calls
    answered an error (the numbers would time error replies, which skip the command's work),
    or None. ``first``: the load tool's first error reply, when it gave one."""
    if not found.calls or found.errors <= max_share * found.calls:
        return None
    facts = [f"{found.errors / found.calls:.0%}"]
    if found.worst:
        facts.append(f"most: {found.worst.replace('|', ' ').upper()}")
    if found.prefixes:
        facts.append("INFO errorstats: " + ", ".join(f"{prefix} ×{count}"
                                                     for prefix, count in found.prefixes))
    if first:
        facts.append(f"first error reply: {first!r}")
    return (f"{found.errors} of {found.calls} calls of the load answered an error "
            f"({'; '.join(facts)}): beyond {max_share:.0%} error replies the numbers time "
            "errors, not the command")
