"""kvperf's own keyspace seeding, the same for every load tool.

Reads need their keys to exist, pops need one element per pop: seeding writes exactly the keys
the tool will read (valkey-benchmark's naming, ``key:<12 digits>``), pipelined in batches. In
cluster mode each batch goes to the node that owns its keys (slot map from CLUSTER SLOTS).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from kvperf.config.commands import Seed
from kvperf.config.workload import parse_value_sizes
from kvperf.core.errors import DriverError
from kvperf.core.keyslot import key_slot
from kvperf.server.resp import ConnectionLost, Endpoint, Reply, RespClient, RespError

BATCH = 500  # keys or elements per command
PIPELINE = 64  # commands per round trip

Command = tuple[str | bytes | int, ...]


def key_name(i: int) -> bytes:
    return b"key:%012d" % i


def member_name(i: int) -> bytes:
    return b"element:%012d" % i


def _chunks(total: int, size: int = BATCH) -> Iterator[range]:
    for start in range(0, total, size):
        yield range(start, min(start + size, total))


def seed_commands(seed: Seed, keyspacelen: int, data: bytes, start: int = 0,
                  count: int = 0, single_node: bool = True,
                  sizes: Sequence[int] | None = None) -> Iterator[Command]:
    """The commands that create what ``seed`` needs (pure). ``count``: elements for pops;
    ``sizes``: each string key's value size (the first ``sizes[i]`` bytes of ``data``).

    Strings go out as MSET batches on a single node; in a cluster each key may live on another
    node, so they go out as single SETs (routed per key).
    """
    if seed is Seed.STRINGS:
        def value(i: int) -> bytes:
            return data if sizes is None else data[:sizes[i]]
        for part in _chunks(keyspacelen):
            if single_node:
                yield ("MSET", *[x for i in part for x in (key_name(i), value(i))])
            else:
                yield from (("SET", key_name(i), value(i)) for i in part)
    elif seed is Seed.HASH_FIELDS:
        for part in _chunks(keyspacelen):
            yield ("HSET", "myhash", *[x for i in part for x in (member_name(i), data)])
    elif seed is Seed.SET_MEMBERS:
        for part in _chunks(keyspacelen):
            yield ("SADD", "myset", *[member_name(i) for i in part])
    elif seed is Seed.ZSET_MEMBERS:
        for part in _chunks(keyspacelen):
            yield ("ZADD", "myzset", *[x for i in part for x in (i, member_name(i))])
    elif seed is Seed.LIST_600:
        yield ("RPUSH", "mylist", *[data] * 600)
    elif seed is Seed.STREAM:
        for _ in range(min(keyspacelen, 10_000)):
            yield ("XADD", "mystream", "*", "myfield", data)
    else:
        yield from _pop_supply(seed, data, start, count)


def _pop_supply(seed: Seed, data: bytes, start: int, count: int) -> Iterator[Command]:
    for part in _chunks(count):
        ids = range(start + part.start, start + part.stop)
        if seed is Seed.LIST_POP:
            yield ("RPUSH", "mylist", *[data] * len(ids))
        elif seed is Seed.SET_POP:
            yield ("SADD", "myset", *[b"pop:%d" % i for i in ids])
        elif seed is Seed.ZSET_POP:
            yield ("ZADD", "myzset", *[x for i in ids for x in (i, b"pop:%d" % i)])


POP_KEYS = {Seed.LIST_POP: ("LLEN", "mylist"), Seed.SET_POP: ("SCARD", "myset"),
            Seed.ZSET_POP: ("ZCARD", "myzset")}


class KeyStore(Protocol):
    """What seeding needs of a server's keys: send commands, count a seeded key's elements,
    and how many nodes hold them (Keyspace; a recording fake in unit tests)."""

    @property
    def nodes(self) -> int: ...

    def send_all(self, commands: Iterator[Command]) -> int: ...

    def count(self, seed: Seed) -> int: ...


@dataclass
class Keyspace:
    """Connections to every primary and the slot map, for routing seed commands."""

    clients: list[RespClient]
    slot_owner: list[int]  # slot → index into clients (all 0 outside cluster mode)

    @classmethod
    def open(cls, endpoints: tuple[Endpoint, ...], cluster: bool) -> Keyspace:
        try:
            first = RespClient(endpoints[0], timeout=30)
            if not cluster:
                return cls([first], [0] * 16384)
            return cls._cluster(first, endpoints[0])
        except (ConnectionLost, RespError) as exc:
            raise DriverError(f"seeding: {exc}") from None

    @classmethod
    def _cluster(cls, first: RespClient, seed_endpoint: Endpoint) -> Keyspace:
        slots = first.call("CLUSTER", "SLOTS")
        first.close()
        clients: dict[tuple[str, int], int] = {}
        conns: list[RespClient] = []
        owner = [0] * 16384
        for entry in slots if isinstance(slots, list) else []:
            assert isinstance(entry, list)
            start, end, primary = entry[0], entry[1], entry[2]
            assert isinstance(start, int) and isinstance(end, int) and isinstance(primary, list)
            host, port = _host_port(primary, seed_endpoint)
            if (host, port) not in clients:
                clients[(host, port)] = len(conns)
                conns.append(RespClient(Endpoint(host, port, seed_endpoint.tls_ca,
                                                seed_endpoint.password), timeout=30))
            owner[start : end + 1] = [clients[(host, port)]] * (end - start + 1)
        return cls(conns, owner)

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def __enter__(self) -> Keyspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def nodes(self) -> int:
        return len(self.clients)

    def node_for(self, command: Command) -> int:
        key = command[1]
        return self.slot_owner[key_slot(key if isinstance(key, bytes) else str(key).encode())]

    def send_all(self, commands: Iterator[Command]) -> int:
        """Send every command, pipelined per node; return how many were sent."""
        pending: dict[int, list[Command]] = defaultdict(list)
        sent = 0
        for command in commands:
            node = self.node_for(command)
            pending[node].append(command)
            if len(pending[node]) >= PIPELINE:
                sent += self._flush(node, pending.pop(node))
        for node, batch in pending.items():
            sent += self._flush(node, batch)
        return sent

    def _flush(self, node: int, batch: list[Command]) -> int:
        try:
            replies = self.clients[node].pipeline(batch)
        except ConnectionLost as exc:
            raise DriverError(f"seeding: {exc}") from None
        _raise_first_error(replies)
        return len(batch)

    def count(self, seed: Seed) -> int:
        """Elements left in the key a pop command consumes."""
        name, key = POP_KEYS[seed]
        client = self.clients[self.node_for((name, key))]
        try:
            reply = client.call(name, key)
        except (ConnectionLost, RespError) as exc:
            raise DriverError(f"counting {key}: {exc}") from None
        return reply if isinstance(reply, int) else 0


def _host_port(primary: list[Reply], fallback: Endpoint) -> tuple[str, int]:
    host = primary[0]
    port = primary[1]
    name = host.decode() if isinstance(host, bytes) and host else fallback.host
    return name, int(port) if isinstance(port, int) else fallback.port


def _raise_first_error(replies: list[Reply]) -> None:
    for reply in replies:
        if isinstance(reply, RespError):
            raise DriverError(f"seeding: server replied {reply}")


def seed_keyspace(keyspace: KeyStore, seed: Seed, keyspacelen: int, data_size: int,
                  value_sizes: str | None = None) -> int:
    """Create what a read command needs; return the number of commands sent. With a
    value-size distribution (``value_sizes``, ``data_size`` its largest) each string key
    gets a size drawn from it, so reads return the distribution's sizes too."""
    sizes = None if value_sizes is None else drawn_sizes(value_sizes, keyspacelen)
    return keyspace.send_all(seed_commands(seed, keyspacelen, b"x" * data_size,
                                           single_node=keyspace.nodes == 1, sizes=sizes))


def drawn_sizes(value_sizes: str, count: int, seed: int = 0) -> list[int]:
    """``count`` sizes drawn from a value-size distribution (config/workload.py's text):
    a bucket by its weight, then a size uniform within it; the same for the same seed."""
    buckets = parse_value_sizes("value_sizes", value_sizes)
    rng = random.Random(seed)
    chosen = rng.choices(buckets, weights=[b.weight for b in buckets], k=count)
    return [b.lo if b.lo == b.hi else rng.randint(b.lo, b.hi) for b in chosen]


def ensure_pop_supply(keyspace: KeyStore, seed: Seed, needed: int, data_size: int) -> int:
    """Top the popped key up to at least ``needed`` elements; return the count now there."""
    have = keyspace.count(seed)
    if have < needed:
        # Fresh member names each top-up, so none collides with a member still there.
        start = time.time_ns() // 1000
        keyspace.send_all(seed_commands(seed, 0, b"x" * data_size, start=start,
                                        count=needed - have))
    return keyspace.count(seed)
