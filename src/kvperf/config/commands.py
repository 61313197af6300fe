"""The catalogue of commands kvperf can measure, and what each needs seeded first.

Key names follow valkey-benchmark's built-in tests (``key:<12 digits>``, ``mylist``, ``myset``,
``myzset``, ``myhash``), so that seeded keys are the keys the tool reads. Reads without a built-in
test run as custom commands on keys their write command seeded.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum

RAND = "__rand_int__"
DATA = "__data__"
KEY = "__key__"  # memtier's placeholder: a key of the seeded keyspace
KEY2 = "__key2__"  # a two-key command's second key (drawn on its own in a command file)
FIELDS = re.compile(r"__fields:(\d+)__")  # field:0 … field:N-1 (HMGET, HDEL, …)
FIELD_VALUES = re.compile(r"__field_values:(\d+)__")  # field:0 __data__ … (HSET)
MAX_FIELDS = 1000
SEPARATOR = ";"  # between the commands of a sequence (kvload's syntax)
_PLACEHOLDER = re.compile(r"__[A-Za-z0-9_:]+?__")
# The string commands a command file may send to __key__ while its reads still find the
# seeded string keyspace (any other command there, e.g. HSET, means another type: no seed).
STRING_COMMANDS = frozenset({
    "get", "mget", "exists", "strlen", "getrange", "ttl", "pttl", "type", "set", "setex",
    "psetex", "setnx", "getset", "getdel", "getex", "append", "setrange", "mset", "del",
    "unlink", "touch", "expire", "pexpire", "persist", "copy", "incr", "incrby", "decr",
    "decrby", "incrbyfloat"})
MAX_SEQUENCE = 64  # commands in one mix or transaction (kvload's per-sequence key fields)


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


# Commands the server flags readonly that kvperf's loads send: with read_from_replicas they
# may go to replicas (kvload asks the server, COMMAND INFO; this is kvperf's side of it:
# which replicas' calls count as the load's and which mixes it refuses).
READ_COMMANDS = frozenset({
    "get", "mget", "exists", "strlen", "getrange", "hget", "hmget", "hgetall", "hexists",
    "hlen", "sismember", "smembers", "scard", "zscore", "zrank", "zrange", "zcard", "lrange",
    "lindex", "llen", "xrange", "xlen", "ttl", "pttl", "type"})
POP_SEEDS = frozenset({Seed.LIST_POP, Seed.SET_POP, Seed.ZSET_POP})

# What a command's data is stored as, for --measure memory (N keys or elements of it): the
# collections of the writers and readers of lists, sets, hashes and sorted sets; else strings.
_STORED_AS = {"LPUSH": Seed.LIST_POP, "RPUSH": Seed.LIST_POP, "SADD": Seed.SET_MEMBERS,
              "HSET": Seed.HASH_FIELDS, "ZADD": Seed.ZSET_MEMBERS}
_STORED_SEEDS = {Seed.HASH_FIELDS: Seed.HASH_FIELDS, Seed.SET_MEMBERS: Seed.SET_MEMBERS,
                 Seed.ZSET_MEMBERS: Seed.ZSET_MEMBERS, Seed.LIST_600: Seed.LIST_POP,
                 Seed.LIST_POP: Seed.LIST_POP, Seed.SET_POP: Seed.SET_MEMBERS,
                 Seed.ZSET_POP: Seed.ZSET_MEMBERS}


def stored_as(name: str, seed: Seed) -> Seed:
    """The kind of data (as a Seed that creates it) a command of this name and seed works
    on: a list (elements), a set, hash or sorted set (members), else strings (keys)."""
    return _STORED_AS.get(name) or _STORED_SEEDS.get(seed, Seed.STRINGS)


@dataclass(frozen=True)
class CommandSpec:
    """One measurable command: a built-in tool test or a custom command line."""

    name: str  # as written in results ("SET", "HGET", or the custom line)
    test: str | None  # valkey-benchmark -t name; None → run as a custom command
    argv: tuple[str, ...]  # the command itself, with __rand_int__/__data__ placeholders
    seed: Seed = Seed.NONE
    independent_keys: bool = False  # each command of a sequence draws its own keys

    @property
    def is_custom(self) -> bool:
        return self.test is None

    @property
    def sequence(self) -> tuple[tuple[str, ...], ...]:
        """The commands sent together (one for a plain command), split at ``;``."""
        parts: list[tuple[str, ...]] = [()]
        for word in self.argv:
            if word == SEPARATOR:
                parts.append(())
            else:
                parts[-1] = (*parts[-1], word)
        return tuple(p for p in parts if p)

    @property
    def is_sequence(self) -> bool:
        return len(self.sequence) > 1

    @property
    def calls_per_sequence(self) -> dict[str, int]:
        """How often each command (lower case, as INFO commandstats names it) runs per
        sequence: ``{"get": 10, "set": 1}`` for a 1:10 SET:GET mix."""
        return dict(Counter(part[0].lower() for part in self.sequence))

    @property
    def pops(self) -> bool:
        return self.seed in POP_SEEDS

    @property
    def reads(self) -> bool:
        """Every command of it is a read (``READ_COMMANDS``): it may go to replicas."""
        return all(name in READ_COMMANDS for name in self.calls_per_sequence)

    @property
    def mixes_reads_and_writes(self) -> bool:
        names = self.calls_per_sequence
        return not self.reads and any(name in READ_COMMANDS for name in names)


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

def ratio_command(ratio: str, name: str | None = None) -> CommandSpec:
    """A SET:GET mix in memtier's ``--ratio`` notation (``"1:10"``: one SET per ten GETs)
    as one sequence, reduced by the common divisor; every command draws its own key of the
    seeded keyspace, so the GETs find what the seed stage wrote."""
    sets, gets = _ratio_parts(ratio)
    divisor = math.gcd(sets, gets)
    sets, gets = sets // divisor, gets // divisor
    lines = [f"SET {_KEY} {DATA}"] * sets + [f"GET {_KEY}"] * gets
    seed = Seed.STRINGS if gets else Seed.NONE
    return CommandSpec(name or f"SET:GET {sets}:{gets}", None,
                       tuple(f" {SEPARATOR} ".join(lines).split()), seed, independent_keys=True)


def weighted_command(text: str, name: str) -> CommandSpec:
    """A command file's text — lines of ``WEIGHT COMMAND ARGS…`` (``#`` comments, blank
    lines) — as one sequence running each command exactly its weight's share: the weights
    reduced by their common divisor, each command repeated that many times (at most
    MAX_SEQUENCE per cycle), every command drawing its own keys (placeholders as in custom
    commands: ``__key__``, ``__rand_int__``, ``__data__``). Reads of ``__key__`` find the
    seeded string keyspace. Mistakes → ValueError naming the line."""
    entries: list[tuple[int, tuple[str, ...]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2 or not words[0].isdigit() or int(words[0]) < 1:
            raise ValueError(f"{name}: line {number}: {line.strip()!r} is not WEIGHT COMMAND "
                             "ARGS… (a positive integer weight, e.g. \"3 GET __key__\")")
        try:
            argv = _expand_placeholders(words[1:])
        except ValueError as exc:
            raise ValueError(f"{name}: line {number}: {exc}") from None
        if SEPARATOR in argv:
            raise ValueError(f"{name}: line {number}: one command a line (no {SEPARATOR!r})")
        entries.append((int(words[0]), argv))
    if not entries:
        raise ValueError(f"{name}: no command (lines of WEIGHT COMMAND ARGS…)")
    return _weighted(entries, name)


def _weighted(entries: list[tuple[int, tuple[str, ...]]], name: str) -> CommandSpec:
    divisor = math.gcd(*(w for w, _ in entries))
    cycle = sum(w // divisor for w, _ in entries)
    if cycle > MAX_SEQUENCE:
        reduced = ", ".join(str(w // divisor) for w, _ in entries)
        raise ValueError(f"{name}: the weights reduced ({reduced}) need {cycle} commands per "
                         f"cycle, more than {MAX_SEQUENCE}")
    words: list[str] = []
    for weight, argv in entries:
        for _ in range(weight // divisor):
            words += [*([SEPARATOR] if words else []), *argv]
    return CommandSpec(name, None, tuple(words), _file_seed([a for _, a in entries]),
                       independent_keys=True)


def _file_seed(commands: list[tuple[str, ...]]) -> Seed:
    """The seeded string keyspace when a command file reads ``__key__`` and every command
    on ``__key__`` is a string command (a hash or list command there would meet strings:
    WRONGTYPE); else none (reads of keys the file writes may miss)."""
    on_key = [a[0].lower() for a in commands if _KEY in a]
    reads = any(name in READ_COMMANDS for name in on_key)
    return Seed.STRINGS if reads and set(on_key) <= STRING_COMMANDS else Seed.NONE


def _ratio_parts(ratio: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", ratio)
    if not match:
        raise ValueError(f"ratio {ratio!r} must be SET:GET, e.g. \"1:10\"")
    sets, gets = int(match.group(1)), int(match.group(2))
    if sets + gets == 0:
        raise ValueError(f"ratio {ratio!r} runs no command")
    if (sets + gets) // math.gcd(sets, gets) > MAX_SEQUENCE:
        raise ValueError(f"ratio {ratio!r} needs more than {MAX_SEQUENCE} commands per cycle")
    return sets, gets


def transaction(count: int) -> CommandSpec:
    """MULTI, ``count`` SETs of keys of their own, EXEC: one transaction per sequence."""
    if not 1 <= count <= MAX_SEQUENCE - 2:
        raise ValueError(f"MULTI_EXEC_{count}: a transaction of 1 to {MAX_SEQUENCE - 2} "
                         "commands")
    lines = ["MULTI", *[f"SET {_KEY} {DATA}"] * count, "EXEC"]
    return CommandSpec(f"MULTI_EXEC_{count}", None,
                       tuple(f" {SEPARATOR} ".join(lines).split()), independent_keys=True)


MIXES: dict[str, CommandSpec] = {
    "MIX_READ_HEAVY": ratio_command("1:10", "MIX_READ_HEAVY"),  # GET:SET 10:1
    "MIX_WRITE_HEAVY": ratio_command("10:1", "MIX_WRITE_HEAVY"),  # GET:SET 1:10
    "MIX_50_50": ratio_command("1:1", "MIX_50_50"),
    "MULTI_EXEC_5": transaction(5),
}
CATALOGUE.update(MIXES)

ALIASES = {"LRANGE": "LRANGE_100", "PING": "PING_MBULK", "MULTI_EXEC": "MULTI_EXEC_5"}


def _expand_placeholders(words: list[str]) -> tuple[str, ...]:
    """memtier's ``__key__`` (and a second key, ``__key2__``) becomes a key of the seeded
    keyspace, a field list (``__fields:N__``, ``__field_values:N__``) its N words or pairs;
    any other ``__word__`` that no tool expands is refused instead of being sent literally."""
    out: list[str] = []
    for word in words:
        if (listed := _field_list(word)) is not None:
            out += listed
            continue
        word = word.replace(KEY2, _KEY).replace(KEY, _KEY)
        unknown = [p for p in _PLACEHOLDER.findall(word) if p not in (RAND, DATA)]
        if unknown:
            raise ValueError(f"placeholder {unknown[0]!r} in {word!r} is not expanded by any "
                             f"tool; use {RAND}, {DATA}, {KEY} (memtier's key), {KEY2}, "
                             "__fields:N__ or __field_values:N__")
        out.append(word)
    return tuple(out)


def _field_list(word: str) -> list[str] | None:
    """``__fields:N__`` → ``field:0 … field:N-1``; ``__field_values:N__`` → each followed
    by ``__data__``; None for any other word (a list is a word of its own)."""
    for pattern, valued in ((FIELDS, False), (FIELD_VALUES, True)):
        if (match := pattern.fullmatch(word)) is not None:
            count = int(match.group(1))
            if not 1 <= count <= MAX_FIELDS:
                raise ValueError(f"{word!r}: a field list holds 1 to {MAX_FIELDS} fields")
            return [w for i in range(count) for w in (f"field:{i}", *([DATA] if valued else []))]
    return None




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
        return _catalogue_entry(text, name)
    argv = _expand_placeholders(words)
    if argv[0] == SEPARATOR or argv[-1] == SEPARATOR or "; ;" in " ".join(argv):
        raise ValueError(f"{text!r}: an empty command in the sequence")
    if len(CommandSpec("", None, argv).sequence) > MAX_SEQUENCE:
        raise ValueError(f"{text!r}: more than {MAX_SEQUENCE} commands in one sequence")
    return CommandSpec(" ".join(argv), None, argv, Seed.NONE)


def _catalogue_entry(text: str, name: str) -> CommandSpec:
    if name in CATALOGUE:
        return CATALOGUE[name]
    transaction_size = re.fullmatch(r"MULTI_EXEC_(\d+)", name)
    if transaction_size:
        return transaction(int(transaction_size.group(1)))
    hint = difflib.get_close_matches(name, [*CATALOGUE, *ALIASES], n=1)
    known = ", ".join(sorted(CATALOGUE))
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    raise ValueError(f"unknown command {text!r}{suggestion}; known commands: {known}")
