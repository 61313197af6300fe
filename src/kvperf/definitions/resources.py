"""A definition's ``resources.requests`` against the machine (pure): what it needs, whether
it fits.

Quantities are read as the corpus runner's tools write them: docker's memory units
(``64k``, ``512m``, ``512mb``, ``32g``, ``32GB``: powers of 1024 — the corpus runner starts
its servers with docker), Kubernetes' (``32Gi``, ``512Mi``: powers of 1024; ``32G``,
``500M``: powers of 1000), plain numbers (bytes; CPUs), and CPUs in thousandths (``500m`` =
0.5).

The memory a test needs on one machine: the definition's own server request
(``dbconfig.resources``: the figure its author sized for the dataset) for each server holding
a full copy (the primary and every replica; a cluster shares one copy among its primaries),
plus the clients' requests (they run at once) or the preload tool's, whichever is more. A
topology's request (10g per server in the corpus table, whatever the dataset) is a
container default, not a need: it counts only for CPUs. A test whose memory does not fit
is refused: a server killed by the kernel's OOM killer minutes into its preload is what it
prevents. CPUs (the server's: ``dbconfig`` or else the topology's, plus every client's)
never refuse: fewer CPUs than asked means server and clients share them — contention the
plan's note states, not a failure (401 corpus definitions ask 4 client CPUs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kvperf.definitions.model import Resources

GIB = 1 << 30
_QUANTITY = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?|\.\d+)\s*(?P<unit>[A-Za-z]*)\s*$")
_BINARY = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_DOCKER = {f"{letter}{b}": 1024 ** power for letter, power in _BINARY.items()
           for b in ("", "b")}  # docker: 512m, 512mb, 32g (lower case, powers of 1024)
_KUBERNETES = {**{f"{letter.upper()}i": 1024 ** power for letter, power in _BINARY.items()},
               **{letter.upper(): 1000 ** power for letter, power in _BINARY.items()}
               }  # 32Gi, 512Mi; 32G, 500M (powers of 1000)
_MEMORY_UNITS = {"": 1, "b": 1, "B": 1, **_DOCKER, **_KUBERNETES}
_MEMORY_UNITS.update({unit.upper(): factor for unit, factor in _DOCKER.items()
                      if unit.endswith("b")})  # 32GB, 512MB as docker reads them


@dataclass(frozen=True)
class Machine:
    """What this machine has: memory (bytes, MemTotal) and the CPUs kvperf may use."""

    memory: int
    cpus: int


def memory_bytes(text: str) -> int:
    """``32g``, ``32Gi``, ``32G``, ``512mb``, ``1048576`` → bytes (ValueError naming it)."""
    match = _QUANTITY.match(str(text))
    factor = _MEMORY_UNITS.get(match["unit"]) if match else None
    if match is None or factor is None:
        raise ValueError(f"memory {text!r} is not a quantity (e.g. 512m, 32g, 32Gi, 500M)")
    return int(float(match["number"]) * factor)


def cpu_count(text: str) -> float:
    """``4``, ``0.5``, ``500m`` → CPUs (ValueError naming it)."""
    match = _QUANTITY.match(str(text))
    if match is None or match["unit"] not in ("", "m"):
        raise ValueError(f"cpus {text!r} is not a CPU count (e.g. 2, 0.5, 500m)")
    number = float(match["number"])
    return number / 1000 if match["unit"] == "m" else number


def gib(count: int) -> str:
    """Bytes as GiB for a message: ``32 GiB``, ``23.5 GiB``."""
    value = count / GIB
    return f"{value:.0f} GiB" if abs(value - round(value)) < 0.05 else f"{value:.1f} GiB"


def _cpus(count: float) -> str:
    return f"{count:g} CPU{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Needs:
    """What a test asks of the machine, each part named (``server``, a client's tool)."""

    memory: tuple[tuple[str, int], ...] = ()
    cpus: tuple[tuple[str, float], ...] = ()

    @property
    def memory_total(self) -> int:
        return sum(count for _, count in self.memory)

    @property
    def cpus_total(self) -> float:
        return sum(count for _, count in self.cpus)


Named = Sequence[tuple[str, Resources | None]]


def _memory(resources: Resources | None) -> int | None:
    return None if resources is None or not resources.memory else \
        memory_bytes(resources.memory)


def _cpu(resources: Resources | None) -> float | None:
    return None if resources is None or not resources.cpus else cpu_count(resources.cpus)


def needs(server: Resources | None, topology: Resources | None, copies: int,
          clients: Named, preload: Named = ()) -> Needs:
    """The memory and CPUs a test asks for (ValueError naming a bad quantity). ``copies``:
    servers holding a full copy of the dataset (1 + replicas)."""
    memory: list[tuple[str, int]] = []
    server_memory = _memory(server)
    if server_memory:
        who = "server" if copies == 1 else f"{copies} servers"
        memory.append((who, server_memory * copies))
    client_memory = [(who, m) for who, r in clients if (m := _memory(r))]
    preload_memory = [(f"preload {who}", m) for who, r in preload if (m := _memory(r))]
    memory += max(client_memory, preload_memory, key=lambda parts: sum(m for _, m in parts))
    cpus: list[tuple[str, float]] = []
    server_cpus = _cpu(server) or _cpu(topology)
    if server_cpus:
        cpus.append(("server", server_cpus))
    cpus += [(who, c) for who, r in clients if (c := _cpu(r))]
    return Needs(tuple(memory), tuple(cpus))


def _parts(parts: Sequence[tuple[str, str]]) -> str:
    return f" ({', '.join(f'{who} {amount}' for who, amount in parts)})" if len(parts) > 1 \
        else f" ({parts[0][0]})" if parts else ""


def misfit(asked: Needs, machine: Machine) -> str | None:
    """Why the test does not fit this machine's memory, or None."""
    total = asked.memory_total
    if total <= machine.memory:
        return None
    return (f"needs {gib(total)} of memory{_parts([(w, gib(m)) for w, m in asked.memory])}, "
            f"this machine has {gib(machine.memory)}; --ignore-resources runs it anyway")


def cpu_note(asked: Needs, machine: Machine) -> str | None:
    """A note when the test asks more CPUs than kvperf may use (never a refusal)."""
    total = asked.cpus_total
    if total <= machine.cpus:
        return None
    return (f"asks {_cpus(total)}{_parts([(w, f'{c:g}') for w, c in asked.cpus])}, this "
            f"machine has {_cpus(machine.cpus)}: server and clients share them")
