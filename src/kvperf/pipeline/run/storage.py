"""The database as a run uses it: the live writer, opened before the first trial (StoreError
if unreachable) and closed at the end, and runners that persist every row as it finishes
(definitions, module scenarios), whose interruption keeps every finished row."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kvperf.core.errors import Interrupted
from kvperf.pipeline.request.common import StoreRequest
from kvperf.pipeline.world import World
from kvperf.store.files import MetricsFile
from kvperf.store.writer import TrialWriter

S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)


@contextlib.contextmanager
def live_store(store: StoreRequest, world: World) -> Iterator[TrialWriter | None]:
    """The run's writer (None with --no-db); the caller checks it once the run is over
    (TrialWriter.check: StoreError, exit 1, when some trials were not written)."""
    if store.url is None:
        yield None
        return
    writer = TrialWriter(world.store(store.url, store.timeout), store.url)
    try:
        yield writer
    finally:
        writer.close()


class Persisting(Protocol[S_co]):
    """A runner that writes each row as it finishes (definitions, module scenarios)."""

    metrics: MetricsFile

    def execute(self) -> S_co: ...


@dataclass
class Persisted(Generic[S]):
    """A persisting run's summary, or (interrupted) None and how many rows were kept where."""

    summary: S | None
    kept: int
    path: Path


def execute_persisting(store: StoreRequest, world: World,
                       make: Callable[[TrialWriter | None], Persisting[S]]) -> Persisted[S]:
    """Run with the live store open; the store checked at the end unless interrupted."""
    with live_store(store, world) as writer:
        runner = make(writer)
        try:
            summary = runner.execute()
        except Interrupted:
            return Persisted(None, len(runner.metrics.new_rows), runner.metrics.path)
    if writer is not None:
        writer.check()
    return Persisted(summary, len(runner.metrics.new_rows), runner.metrics.path)
