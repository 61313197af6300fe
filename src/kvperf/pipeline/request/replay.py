"""``run --trace`` and ``compare --trace``: a recorded trace replayed as the workload — the
flags as given and the checked requests (pipeline/commands/replay.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.pipeline.request.common import InterferenceFlags, StoreFlags, StoreRequest
from kvperf.pipeline.request.options import InterferencePolicy, TraceOptions


@dataclass(frozen=True)
class TraceFlags:
    """--trace and its flags as given; ``others``: the flags given that choose another
    workload (a replay brings its own), by name; ``refs``: compare's refs."""

    trace: Path
    speed: str = "1"
    seed_from_trace: bool = False
    server_bins: tuple[str, ...] = ()
    runs: int | None = None
    label: str | None = None
    store: StoreFlags = field(default_factory=StoreFlags)
    interference: InterferenceFlags = field(default_factory=InterferenceFlags)
    others: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class TraceRequest:
    """`run --trace`: the trace replayed ``runs`` times on fresh servers."""

    options: TraceOptions
    store: StoreRequest
    interference: InterferencePolicy


@dataclass(frozen=True)
class TraceCompareRequest:
    """`compare --trace`: the trace replayed on two servers, interleaved by round."""

    sides: dict[str, TraceOptions]
    rounds: int
    out_dir: Path
    store: StoreRequest
    interference: InterferencePolicy
