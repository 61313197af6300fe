"""The named choices a run is made of: how it measures, how sides share the machine, and
which part of the benchmark this process plays. StrEnums: each value is the word users type
(``--measure instructions``) and the word rows and logs record."""

from __future__ import annotations

from enum import StrEnum


class Measure(StrEnum):
    """What a trial measures (pipeline/run/instructions.py)."""

    TIMING = "timing"  # throughput and latency, as always
    INSTRUCTIONS = "instructions"  # server instructions per request under callgrind
    PERF_INSTRUCTIONS = "perf-instructions"  # hardware instruction counts (perf stat)
    MEMORY = "memory"  # seed N keys, read INFO memory and MEMORY USAGE: bytes per key


class Schedule(StrEnum):
    """How the sides of a comparison share the machine (pipeline/sides/ab.py, duet.py)."""

    ALTERNATE = "alternate"  # one side's trial after the other's, in a seeded random order
    DUET = "duet"  # every side's trial at the same time, on the same cores


class Mode(StrEnum):
    """Which part of the benchmark this kvperf plays."""

    BOTH = "both"  # start the servers and drive the load
    SERVER = "server"  # start the server and wait
    CLIENT = "client"  # drive load at a server kvperf did not start


class ProfileMode(StrEnum):
    """What ``--profile`` samples (pipeline/run/profiling.py)."""

    CPU = "cpu"  # on-CPU stacks: perf's cpu-clock samples
    WALL_TIME = "wall-time"  # on-CPU samples plus every off-CPU interval, by its blocking stack


class Concurrency(StrEnum):
    """How a client harness drives its connections (docs/CLIENTS.md; the config's
    ``concurrency``, ``--concurrency``)."""

    SINGLE = "single"  # one connection, one call after another (clients 1)
    POOL = "pool"  # ``clients`` threads sharing the library's pool of ``clients`` connections
    ASYNC = "async"  # one event loop with ``clients`` calls or batches in flight
