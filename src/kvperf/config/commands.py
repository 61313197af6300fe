"""The catalogue of commands kvperf can measure, and what each needs seeded first.

Key names follow valkey-benchmark's built-in tests (``key:<12 digits>``, ``mylist``, ``myset``,
``myzset``, ``myhash``), so that seeded keys are the keys the tool reads. Reads without a built-in
test run as custom commands on keys their write command seeded.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum

RAND = "__rand_int__"
DATA = "__data__"


class Seed(Enum):
    """What must exist in the keyspace before a command measures something real."""

    NONE = "none"
    STRINGS = "strings"  # key:<i> = data, for i < keyspacelen
    HASH_FIELDS = "hash_fields"  # myhash element:<i> = data
    SET_MEMBERS = "set_members"  # myset element:<i>
    ZSET_MEMBERS = "zset_members"  # myzset score i element:<i>
    LIST_600 = "list_600"  # mylist with 600 elements (LRANGE/LINDEX)
    STREAM = "stream"  # mystream with entries
    LIST_POP = "list_pop"  # mylist with one element per pop
    SET_POP = "set_pop"  # myset with one member per pop
    ZSET_POP = "zset_pop"  # myzset with one member per pop


POP_SEEDS = frozenset({Seed.LIST_POP, Seed.SET_POP, Seed.ZSET_POP})


@dataclass(frozen=True)
class CommandSpec:
    """One measurable command: a built-in tool test or a custom command line."""

    name: str  # as written in results ("SET", "HGET", or the custom line)
    test: str | None  # valkey-benchmark -t name; None → run as a custom command
    argv: tuple[str, ...]  # the command itself, with __rand_int__/__data__ placeholders
    seed: Seed = Seed.NONE

    @property
    def is_custom(self) -> bool:
        return self.test is None

    @property
    def pops(self) -> bool:
        return self.seed in POP_SEEDS


def _builtin(name: str, test: str, line: str, seed: Seed = Seed.NONE) -> CommandSpec:
    return CommandSpec(name, test, tuple(line.split()), seed)


def _custom(name: str, line: str, seed: Seed) -> CommandSpec:
    return CommandSpec(name, None, tuple(line.split()), seed)


_KEY = f"key:{RAND}"
_MEMBER = f"element:{RAND}"

CATALOGUE: dict[str, CommandSpec] = {
    c.name: c
    for c in (
        _builtin("PING_INLINE", "ping_inline", "PING"),
        _builtin("PING_MBULK", "ping_mbulk", "PING"),
        _builtin("SET", "set", f"SET {_KEY} {DATA}"),
        _builtin("GET", "get", f"GET {_KEY}", Seed.STRINGS),
        _builtin("INCR", "incr", f"INCR counter:{RAND}"),
        _builtin("LPUSH", "lpush", f"LPUSH mylist {DATA}"),
        _builtin("RPUSH", "rpush", f"RPUSH mylist {DATA}"),
        _builtin("LPOP", "lpop", "LPOP mylist", Seed.LIST_POP),
        _builtin("RPOP", "rpop", "RPOP mylist", Seed.LIST_POP),
        _builtin("SADD", "sadd", f"SADD myset {_MEMBER}"),
        _builtin("HSET", "hset", f"HSET myhash {_MEMBER} {DATA}"),
        _builtin("SPOP", "spop", "SPOP myset", Seed.SET_POP),
        _builtin("ZADD", "zadd", f"ZADD myzset {RAND} {_MEMBER}"),
        _builtin("ZPOPMIN", "zpopmin", "ZPOPMIN myzset", Seed.ZSET_POP),
        _custom("LRANGE_100", "LRANGE mylist 0 99", Seed.LIST_600),
        _custom("LRANGE_300", "LRANGE mylist 0 299", Seed.LIST_600),
        _custom("LRANGE_500", "LRANGE mylist 0 499", Seed.LIST_600),
        _custom("LRANGE_600", "LRANGE mylist 0 599", Seed.LIST_600),
        _builtin("MSET", "mset", "MSET " + " ".join([f"{_KEY} {DATA}"] * 10)),
        _builtin("XADD", "xadd", f"XADD mystream * myfield {DATA}"),
        _custom("MGET", "MGET " + " ".join([_KEY] * 10), Seed.STRINGS),
        _custom("EXISTS", f"EXISTS {_KEY}", Seed.STRINGS),
        _custom("STRLEN", f"STRLEN {_KEY}", Seed.STRINGS),
        _custom("HGET", f"HGET myhash {_MEMBER}", Seed.HASH_FIELDS),
        _custom("HEXISTS", f"HEXISTS myhash {_MEMBER}", Seed.HASH_FIELDS),
        _custom("SISMEMBER", f"SISMEMBER myset {_MEMBER}", Seed.SET_MEMBERS),
        _custom("ZSCORE", f"ZSCORE myzset {_MEMBER}", Seed.ZSET_MEMBERS),
        _custom("ZRANK", f"ZRANK myzset {_MEMBER}", Seed.ZSET_MEMBERS),
        _custom("ZRANGE", "ZRANGE myzset 0 99", Seed.ZSET_MEMBERS),
        _custom("LINDEX", "LINDEX mylist 300", Seed.LIST_600),
        _custom("XRANGE", "XRANGE mystream - + COUNT 10", Seed.STREAM),
    )
}

ALIASES = {"LRANGE": "LRANGE_100", "PING": "PING_MBULK"}


def resolve_command(text: str) -> CommandSpec:
    """Map a config entry to a CommandSpec; raise ValueError with a suggestion if unknown.

    A name from the catalogue (any case) is that command; a line with spaces is a custom
    command passed to the tool as argv (e.g. ``"SET key:__rand_int__ __data__"``).
    """
    words = text.split()
    if not words:
        raise ValueError("an empty command")
    name = ALIASES.get(text.strip().upper(), text.strip().upper())
    if len(words) == 1:
        if name in CATALOGUE:
            return CATALOGUE[name]
        hint = difflib.get_close_matches(name, [*CATALOGUE, *ALIASES], n=1)
        known = ", ".join(sorted(CATALOGUE))
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise ValueError(f"unknown command {text!r}{suggestion}; known commands: {known}")
    return CommandSpec(text.strip(), None, tuple(words), Seed.NONE)
