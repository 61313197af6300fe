"""``--measure memory`` for module scenarios: what a scenario's memory is divided by.

INFO memory is read before the scenario's data goes in (after ``flush_before``, before
``setup_commands``: a BF.RESERVE in the setup allocates its filter) and after its load has
run and used_memory stopped moving. The growth is divided by the scenario's *unit*:

- **filter capacity** — a bloom filter allocates for its capacity, not for what it holds:
  a scenario whose command is ``BF.RESERVE key rate CAPACITY`` made ``calls × CAPACITY``
  units; one whose setup reserved filters counts their capacity as ``BF.INFO key
  CAPACITY`` reads it after the load (a scaling filter's added sub-filters included);
- **document** — an ingestion from a dataset: the rows it sent (one JSON document, one
  hash… per row);
- **call** — a write that added no key (JSON.ARRAPPEND grows documents in place): its calls;
- **key** — anything else: the keys the scenario added (none for a read: no figure).

The unit's name and count go in the row's ``memory`` (``unit``, ``items``; its
``bytes_per_key`` is then bytes per that unit). INFO's growth includes what the server
allocated beside the data and kept (a first module call's state, Valkey 8's shared query
buffer: tens of KB), which weighs on a scenario of few large keys; MEMORY USAGE of the keys
the scenario made (``sample_bytes_per_key``, per unit) counts the data alone.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kvperf.config.scenarios import Scenario, ScenarioType
from kvperf.server.memory import MemoryInfo
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError

RESERVE = "BF.RESERVE"
SETTLE_SECONDS = 3.0  # at most, for used_memory to stop moving after the load (rehashing)
CAPACITY = "filter capacity"
DOCUMENT = "document"
CALL = "call"
KEY = "key"


@dataclass(frozen=True)
class MemoryUnit:
    """What a scenario's memory growth is divided by: its name and how many it made."""

    name: str
    items: int


def reserved(command: str) -> tuple[str, int] | None:
    """``BF.RESERVE key rate CAPACITY …`` → (key, capacity); None for any other command or a
    capacity that is not a number (a ``__field__`` placeholder)."""
    words = shlex.split(command)
    if len(words) < 4 or words[0].upper() != RESERVE or not words[3].isdigit():
        return None
    return words[1], int(words[3])


def memory_unit(scenario: Scenario, calls: int, rows_sent: int | None, keys_added: int,
                capacity_of: Callable[[str], int | None]) -> MemoryUnit:
    """The scenario's unit (module doc; pure but for ``capacity_of``: BF.INFO CAPACITY of
    a key, None when it cannot be read)."""
    own = reserved(scenario.command)
    if own is not None:
        return MemoryUnit(CAPACITY, own[1] * calls)
    filters = [r for c in scenario.setup_commands if (r := reserved(c)) is not None]
    if filters:
        return MemoryUnit(CAPACITY, sum(capacity_of(key) or capacity for key, capacity
                                        in filters))
    if (scenario.type == ScenarioType.INGESTION and scenario.dataset is not None
            and rows_sent is not None):
        return MemoryUnit(DOCUMENT, rows_sent)
    if scenario.type == ScenarioType.WRITE and keys_added <= 0:
        return MemoryUnit(CALL, calls)
    return MemoryUnit(KEY, max(keys_added, 0))


def filter_capacity(endpoints: Sequence[Endpoint]) -> Callable[[str], int | None]:
    """BF.INFO KEY CAPACITY on the node holding the key (the first that answers a number)."""
    def read(key: str) -> int | None:
        for endpoint in endpoints:
            try:
                with RespClient(endpoint, timeout=10) as client:
                    value = client.call("BF.INFO", key, "CAPACITY")
            except (ConnectionLost, RespError):
                continue
            if isinstance(value, int):
                return value
        return None
    return read


def settle(read: Callable[[], MemoryInfo | None], seconds: float = SETTLE_SECONDS) -> None:
    """Wait (≤ ``seconds``) until used_memory reads the same twice 200 ms apart."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        info = read()
        used = info["used_memory"] if info else None
        if used is not None and used == last:
            return
        last = used
        time.sleep(0.2)
