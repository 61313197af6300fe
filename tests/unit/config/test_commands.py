"""The command catalogue: sequences, mixes, transactions and placeholders."""

from __future__ import annotations

import pytest

from kvperf.config.commands import (
    CATALOGUE,
    Seed,
    ratio_command,
    resolve_command,
    transaction,
)
from kvperf.config.loader import parse_config


def test_a_custom_sequence_is_split_and_counted_per_command() -> None:
    spec = resolve_command("SET key:__rand_int__ __data__ ; GET key:__rand_int__")
    assert spec.sequence == (("SET", "key:__rand_int__", "__data__"),
                             ("GET", "key:__rand_int__"))
    assert spec.is_sequence and spec.calls_per_sequence == {"set": 1, "get": 1}
    assert not spec.independent_keys  # the user's GET reads the key its SET wrote


def test_a_plain_command_is_a_sequence_of_one() -> None:
    spec = resolve_command("GET")
    assert not spec.is_sequence and spec.calls_per_sequence == {"get": 1}


@pytest.mark.parametrize(("ratio", "sets", "gets"), [("1:10", 1, 10), ("10:1", 10, 1),
                                                      ("2:2", 1, 1), ("0:3", 0, 1)])
def test_ratio_is_memtiers_set_to_get(ratio: str, sets: int, gets: int) -> None:
    spec = ratio_command(ratio)
    assert spec.calls_per_sequence == {k: v for k, v in (("set", sets), ("get", gets)) if v}
    assert spec.independent_keys
    assert spec.seed is (Seed.STRINGS if gets else Seed.NONE)
    assert spec.name == f"SET:GET {sets}:{gets}"


@pytest.mark.parametrize("bad", ["10", "a:b", "0:0", "1:100"])
def test_bad_ratios_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="ratio"):
        ratio_command(bad)


def test_catalogue_mixes_and_transactions() -> None:
    assert CATALOGUE["MIX_READ_HEAVY"].calls_per_sequence == {"set": 1, "get": 10}
    assert CATALOGUE["MIX_WRITE_HEAVY"].calls_per_sequence == {"set": 10, "get": 1}
    assert CATALOGUE["MIX_50_50"].calls_per_sequence == {"set": 1, "get": 1}
    assert resolve_command("multi_exec").calls_per_sequence == {"multi": 1, "set": 5, "exec": 1}
    three = resolve_command("MULTI_EXEC_3")
    assert three == transaction(3) and three.calls_per_sequence["set"] == 3
    with pytest.raises(ValueError, match="transaction of 1 to 62"):
        resolve_command("MULTI_EXEC_0")


def test_memtiers_key_placeholder_is_a_seeded_key() -> None:
    spec = resolve_command("HSET __key__ field:1 __data__")
    assert spec.argv == ("HSET", "key:__rand_int__", "field:1", "__data__")


@pytest.mark.parametrize("line", ["SET __kee__ x", "GET k:__rand__", "SET k __value__"])
def test_unknown_placeholders_are_refused_by_name(line: str) -> None:
    with pytest.raises(ValueError, match="placeholder '__"):
        resolve_command(line)


@pytest.mark.parametrize("line", ["; GET k", "GET k ;", "GET k ; ; SET k v"])
def test_empty_commands_in_a_sequence_are_refused(line: str) -> None:
    with pytest.raises(ValueError, match="empty command"):
        resolve_command(line)


def test_config_ratio_key_adds_mixes_to_commands() -> None:
    (spec,) = parse_config([{"requests": 10, "commands": ["SET"], "ratio": ["1:10", "1:1"]}],
                           {0, 1})
    assert [c.name for c in spec.commands] == ["SET", "SET:GET 1:10", "SET:GET 1:1"]
    (only,) = parse_config({"duration": 1, "ratio": "1:4"}, {0, 1})
    assert [c.name for c in only.commands] == ["SET:GET 1:4"]


def test_reads_are_read_commands_alone() -> None:
    assert resolve_command("GET").reads and resolve_command("MGET").reads
    assert not resolve_command("SET").reads and not resolve_command("PING").reads
    mix = resolve_command("MIX_READ_HEAVY")
    assert not mix.reads and mix.mixes_reads_and_writes
    assert not resolve_command("MULTI_EXEC").mixes_reads_and_writes
