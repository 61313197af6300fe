"""What kvperf's Python harnesses share (docs/CLIENTS.md, contract v1): the spec read, each
worker's operations built before the loop (commands drawn by ratio, keys by pattern, from a
PRNG seeded with seed + worker index), the timed loops (sync threads or asyncio tasks) with
warmup counted apart, latency counts kept in a dict of whole microseconds (no histogram
arithmetic on the hot path: they enter an HdrHistogram after the run), the process's own
CPU in the measured window (getrusage(RUSAGE_SELF), every thread: read when warmup ends and
when the last worker is done), the untimed allocation pass after it (tracemalloc), and the
result.

A harness module gives an ``Adapter``: how to connect and how one call or one batch of calls
is made with its library; ``main(adapter)`` does the rest. Runs on the harness's own venv
(hdrhistogram installed there), never on kvperf's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import platform
import random
import resource
import sys
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

TABLE = 1 << 16  # operations pre-drawn over all workers (random keys), cycled: ~8 MB
MIN_TABLE = 1024  # … and at least this many per worker
MAX_SEQUENTIAL = 1 << 20
DEFAULT_ALLOCATION_OPS = 1000
ALLOCATION_METHOD = (
    "tracemalloc over an untimed pass after the measured window, batches one at a time: the "
    "peak of traced memory above its level at each call's start, summed — a lower bound "
    "(memory freed and allocated again within a call counts once; a native core's "
    "allocations outside Python's allocators are not traced)")


class Unsupported(Exception):
    """A spec this harness cannot run: exit 2 with the reason."""


@dataclass
class Counts:
    """One worker's (or the total's) counts for one phase."""

    ops: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    latency: dict[str, dict[int, int]] = field(default_factory=dict)  # µs → count
    transactions: int = 0
    first_error: str | None = None

    def merge(self, other: Counts) -> None:
        for name, n in other.ops.items():
            self.ops[name] = self.ops.get(name, 0) + n
        for name, n in other.errors.items():
            self.errors[name] = self.errors.get(name, 0) + n
        for name, counts in other.latency.items():
            mine = self.latency.setdefault(name, {})
            for us, n in counts.items():
                mine[us] = mine.get(us, 0) + n
        self.transactions += other.transactions
        self.first_error = self.first_error or other.first_error


@dataclass(frozen=True)
class Spec:
    raw: dict[str, Any]

    @property
    def commands(self) -> list[tuple[str, int]]:
        return [(c["command"], int(c["ratio"])) for c in self.raw["commands"]]

    @property
    def model(self) -> str:
        return str(self.raw["concurrency"]["model"])

    @property
    def workers(self) -> int:
        return int(self.raw["concurrency"]["workers"])

    @property
    def pipeline(self) -> int:
        return int(self.raw["pipeline"])

    @property
    def transaction(self) -> bool:
        return bool(self.raw["transaction"])

    @property
    def value(self) -> bytes:
        return b"x" * int(self.raw["value_size"])

    def share(self, worker: int) -> int | None:
        """This worker's measured commands under a requests bound (None: by duration)."""
        total = self.raw["requests"]
        if total is None:
            return None
        base, extra = divmod(int(total), self.workers)
        return base + (1 if worker < extra else 0)


def operations(spec: Spec, worker: int) -> list[tuple[str, str]]:
    """The worker's (command, key) sequence, drawn once before the loop and cycled."""
    rng = random.Random(int(spec.raw["seed"]) + worker)
    names = [c for c, _ in spec.commands]
    weights = [r for _, r in spec.commands]
    keys = spec.raw["keys"]
    prefix, count = keys["prefix"], int(keys["count"])
    if keys["pattern"] == "sequential":
        length = min(max(count // spec.workers, 1), MAX_SEQUENTIAL)
        indices = [(worker + k * spec.workers) % count for k in range(length)]
    else:  # the harness's own memory stays small (it counts in the client's peak RSS)
        length = max(TABLE // spec.workers, MIN_TABLE)
        indices = [rng.randrange(count) for _ in range(length)]
    drawn = rng.choices(names, weights, k=length)
    return [(c, f"{prefix}incr:{i}" if c == "INCR" else f"{prefix}{i}")
            for c, i in zip(drawn, indices, strict=True)]


@dataclass
class Pace:
    """An open-loop worker's schedule (the spec's ``rate``): its batches' intended send
    times, ``gap_ns`` apart on average — rps / workers commands per second, in batches of
    pipeline — uniform, or exponential gaps (Poisson arrivals) from a seeded PRNG."""

    gap_ns: float
    poisson: bool
    rng: random.Random
    next_ns: float

    @staticmethod
    def of(spec: Spec, worker: int, start_ns: int) -> Pace | None:
        rate = spec.raw.get("rate")
        if not rate:
            return None
        gap = spec.workers * spec.pipeline / float(rate["rps"]) * 1e9
        return Pace(gap, rate["arrivals"] == "poisson",
                    random.Random(int(spec.raw["seed"]) * 7919 + worker), float(start_ns))

    def take(self) -> int:
        """The next batch's intended send time (perf_counter_ns), the schedule moved on."""
        due = self.next_ns
        self.next_ns += self.rng.expovariate(1.0 / self.gap_ns) if self.poisson else self.gap_ns
        return int(due)


@dataclass
class Clock:
    """The phases' shared boundaries (perf_counter_ns)."""

    warmup_end: int
    measure_end: int | None  # None: a requests bound
    measure_start: int = 0
    finished: list[int] = field(default_factory=list)
    cpu_start: resource.struct_rusage | None = None  # the process's CPU when warmup ends
    cpu_end: resource.struct_rusage | None = None  # … and when the last worker is done


def clock(spec: Spec) -> Clock:
    """The phases' boundaries from now, and a thread that reads the process's CPU when
    warmup ends (the measured window's start)."""
    now = time.perf_counter_ns()
    warmup_end = now + int(float(spec.raw["warmup_s"]) * 1e9)
    duration = spec.raw["duration_s"]
    end = warmup_end + int(float(duration) * 1e9) if duration is not None else None
    found = Clock(warmup_end, end, warmup_end)

    def at_measure_start() -> None:
        time.sleep(max(warmup_end - time.perf_counter_ns(), 0) / 1e9)
        if found.cpu_end is None:
            found.cpu_start = resource.getrusage(resource.RUSAGE_SELF)

    if warmup_end <= now:
        found.cpu_start = resource.getrusage(resource.RUSAGE_SELF)
    else:
        threading.Thread(target=at_measure_start, daemon=True).start()
    return found


def measure_end(clock: Clock) -> None:
    """The process's CPU once every worker is done (the measured window's end)."""
    clock.cpu_end = resource.getrusage(resource.RUSAGE_SELF)


def _cpu(clock: Clock) -> dict[str, Any] | None:
    start, end = clock.cpu_start, clock.cpu_end
    if start is None or end is None:  # a window shorter than the start's wake-up: none
        return None
    return {"user_s": round(max(end.ru_utime - start.ru_utime, 0.0), 6),
            "system_s": round(max(end.ru_stime - start.ru_stime, 0.0), 6),
            "source": "getrusage(RUSAGE_SELF): every thread, from warmup's end to the "
                      "last worker's"}


def _record(counts: Counts, batch: Sequence[tuple[str, str]], results: Sequence[Any] | None,
            elapsed_ns: int, error: BaseException | None) -> None:
    us = max(elapsed_ns // 1000, 1)
    ops, latency = counts.ops, counts.latency
    for i, (name, _) in enumerate(batch):
        failed = error if error is not None else (
            results[i] if results is not None and isinstance(results[i], Exception) else None)
        if failed is not None:
            counts.errors[name] = counts.errors.get(name, 0) + 1
            counts.first_error = counts.first_error or f"{name}: {failed}"
        else:
            ops[name] = ops.get(name, 0) + 1
            hist = latency.get(name)
            if hist is None:
                hist = latency[name] = {}
            hist[us] = hist.get(us, 0) + 1


@dataclass
class Worker:
    """One worker's state across phases."""

    spec: Spec
    index: int
    ops: list[tuple[str, str]]
    warm: Counts = field(default_factory=Counts)
    measured: Counts = field(default_factory=Counts)
    position: int = 0
    # The spec's values the loop reads per batch, read once (the harness's own cost per
    # operation is held under 2% of a library call: benchmarks/client_harness_cost.py).
    size: int = field(init=False)
    share: int | None = field(init=False)
    transaction: bool = field(init=False)

    def __post_init__(self) -> None:
        self.size = self.spec.pipeline
        self.share = self.spec.share(self.index)
        self.transaction = self.spec.transaction

    def next_batch(self) -> list[tuple[str, str]]:
        size, ops, n = self.size, self.ops, len(self.ops)
        start = self.position
        self.position = (start + size) % n
        if start + size <= n:
            return ops[start:start + size]
        return ops[start:] + ops[:(start + size) - n]

    def phase(self, now: int, clock: Clock, done: int) -> Counts | None:
        """Where the next batch's counts go (None: this worker is finished)."""
        if now < clock.warmup_end:
            return self.warm
        if self.share is not None:
            return self.measured if done < self.share else None
        assert clock.measure_end is not None
        return self.measured if now < clock.measure_end else None

    def counted(self, counts: Counts, batch: Sequence[tuple[str, str]],
                results: Sequence[Any] | None, elapsed_ns: int,
                error: BaseException | None) -> int:
        """A finished batch counted in its phase; the measured commands it adds."""
        _record(counts, batch, results, elapsed_ns, error)
        if self.transaction:
            counts.transactions += 1
        return len(batch) if counts is self.measured else 0


SyncCall = Callable[[list[tuple[str, str]]], Sequence[Any] | None]
AsyncCall = Callable[[list[tuple[str, str]]], Awaitable[Sequence[Any] | None]]


def run_sync(worker: Worker, call: SyncCall, clock: Clock) -> None:
    """One thread's loop: a batch, timed, counted in its phase, until the bound; open loop
    (a ``rate``): each batch sent at its intended time and timed from it."""
    perf = time.perf_counter_ns
    done = 0
    pace = Pace.of(worker.spec, worker.index, perf())
    while (counts := worker.phase(perf(), clock, done)) is not None:
        batch = worker.next_batch()
        error = None
        if pace is not None:
            due = pace.take()
            if (ahead := due - perf()) > 0:
                time.sleep(ahead / 1e9)
        start = perf() if pace is None else due
        try:
            results = call(batch)
        except Exception as exc:  # the library's failure is the operation's error
            results, error = None, exc
        done += worker.counted(counts, batch, results, perf() - start, error)
    clock.finished.append(perf())


async def run_async(worker: Worker, call: AsyncCall, clock: Clock) -> None:
    """One task's loop (an asyncio worker: one batch in flight per task), paced as
    run_sync's under a ``rate``."""
    perf = time.perf_counter_ns
    done = 0
    pace = Pace.of(worker.spec, worker.index, perf())
    while (counts := worker.phase(perf(), clock, done)) is not None:
        batch = worker.next_batch()
        error = None
        if pace is not None:
            due = pace.take()
            if (ahead := due - perf()) > 0:
                await asyncio.sleep(ahead / 1e9)
        start = perf() if pace is None else due
        try:
            results = await call(batch)
        except Exception as exc:
            results, error = None, exc
        done += worker.counted(counts, batch, results, perf() - start, error)
    clock.finished.append(perf())


def library_incr(client: Any, key: str) -> Any:
    """INCR through the library's own ``incr`` method (one that sends INCR)."""
    return client.incr(key)


def command_incr(client: Any, key: str) -> Any:
    """INCR through ``execute_command``: for redis-py, whose ``incr`` sends ``INCRBY key 1``,
    a different command from the one the spec asks for."""
    return client.execute_command("INCR", key)


Incr = Callable[[Any, str], Any]


def queue(pipe: Any, batch: Sequence[tuple[str, str]], value: bytes,
          incr: Incr = library_incr) -> Any:
    """A batch's commands added to a library's pipeline, transaction or batch object (one
    with set and get methods, and INCR through ``incr``); the object."""
    for name, key in batch:
        if name == "SET":
            pipe.set(key, value)
        elif name == "GET":
            pipe.get(key)
        else:
            incr(pipe, key)
    return pipe


def one(client: Any, name: str, key: str, value: bytes, incr: Incr = library_incr) -> Any:
    """One command through a client with set and get methods, and INCR through ``incr``
    (its reply, or the awaitable of an async client)."""
    if name == "SET":
        return client.set(key, value)
    return client.get(key) if name == "GET" else incr(client, key)


@dataclass
class Adapter:
    """A library's side of a harness: its identity, models, and (sync) ``make_call``
    returning the batch call for one worker, or (async) ``make_async`` returning a
    coroutine that connects and returns each worker's batch call."""

    name: str
    library: str
    version: str
    models: tuple[str, ...]
    make_call: Callable[[Spec], Callable[[int], SyncCall]] | None = None
    make_async: Callable[[Spec], Awaitable[tuple[Callable[[int], AsyncCall],
                                                  Callable[[], Awaitable[None]]]]] | None = None


def _noop_sync(batch: list[tuple[str, str]]) -> None:
    return None


async def _noop_async(batch: list[tuple[str, str]]) -> None:
    return None


def _histogram(counts: dict[int, int]) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for us, n in counts.items():
        hist.record_value(min(us, 60_000_000), n)
    encoded: bytes = hist.encode()
    return encoded.decode()


def _pass_batches(spec: Spec, workers: list[Worker]
                  ) -> Iterator[tuple[int, list[tuple[str, str]]]]:
    """The allocation pass's batches (worker index, batch), the workers in turn, until
    allocation_ops operations."""
    left = int(spec.raw.get("allocation_ops") or DEFAULT_ALLOCATION_OPS)
    while left > 0:
        for worker in workers:
            batch = worker.next_batch()[:left]
            if not batch:
                return
            left -= len(batch)
            yield worker.index, batch


@dataclass
class Passed:
    """The allocation pass's calls per command and the bytes tracemalloc saw."""

    spec: Spec
    calls: dict[str, int] = field(default_factory=dict)
    transactions: int = 0
    traced: int = 0

    def before(self) -> int:
        tracemalloc.reset_peak()
        return tracemalloc.get_traced_memory()[0]

    def after(self, base: int, batch: Sequence[tuple[str, str]]) -> None:
        self.traced += max(tracemalloc.get_traced_memory()[1] - base, 0)
        for name, _ in batch:
            self.calls[name] = self.calls.get(name, 0) + 1
        self.transactions += 1 if self.spec.transaction else 0

    def document(self) -> dict[str, Any]:
        ops = sum(self.calls.values())
        calls = {**self.calls, **({"MULTI": self.transactions, "EXEC": self.transactions}
                                  if self.spec.transaction else {})}
        return {"bytes_per_op": round(self.traced / max(ops, 1), 3), "ops": ops,
                "calls": calls, "exact": False, "method": ALLOCATION_METHOD}


def pass_sync(spec: Spec, workers: list[Worker], calls: list[SyncCall]) -> dict[str, Any]:
    """The untimed allocation pass of a threaded harness, on this thread (tracemalloc's peak
    is the process's: one call at a time keeps each call's its own)."""
    passed = Passed(spec)
    tracemalloc.start()
    try:
        for index, batch in _pass_batches(spec, workers):
            base = passed.before()
            with contextlib.suppress(Exception):  # an error still reached the server
                calls[index](batch)
            passed.after(base, batch)
    finally:
        tracemalloc.stop()
    return passed.document()


async def pass_async(spec: Spec, workers: list[Worker], calls: list[AsyncCall]
                     ) -> dict[str, Any]:
    """The untimed allocation pass of an asyncio harness, one call awaited at a time."""
    passed = Passed(spec)
    tracemalloc.start()
    try:
        for index, batch in _pass_batches(spec, workers):
            base = passed.before()
            with contextlib.suppress(Exception):
                await calls[index](batch)
            passed.after(base, batch)
    finally:
        tracemalloc.stop()
    return passed.document()


def _threads(spec: Spec, adapter: Adapter, workers: list[Worker], clock_box: list[Clock]
             ) -> dict[str, Any]:
    assert adapter.make_call is not None
    factory = adapter.make_call(spec)
    calls = [_noop_sync if spec.raw["noop"] else factory(w.index) for w in workers]
    barrier = threading.Barrier(len(workers), action=lambda: clock_box.append(clock(spec)))
    failures: list[BaseException] = []

    def body(worker: Worker, call: SyncCall) -> None:
        try:
            barrier.wait()
            run_sync(worker, call, clock_box[0])
        except BaseException as exc:  # reported by main
            failures.append(exc)

    threads = [threading.Thread(target=body, args=(w, c), daemon=True)
               for w, c in zip(workers, calls, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if clock_box:
        measure_end(clock_box[0])
    if failures:
        raise failures[0]
    return pass_sync(spec, workers, calls)


async def _tasks(spec: Spec, adapter: Adapter, workers: list[Worker],
                 clock_box: list[Clock]) -> dict[str, Any]:
    assert adapter.make_async is not None
    factory, close = await adapter.make_async(spec)
    calls = [_noop_async if spec.raw["noop"] else factory(w.index) for w in workers]
    clock_box.append(clock(spec))
    try:
        await asyncio.gather(*(run_async(w, c, clock_box[0])
                               for w, c in zip(workers, calls, strict=True)))
        measure_end(clock_box[0])
        return await pass_async(spec, workers, calls)
    finally:
        await close()


def result(spec: Spec, adapter: Adapter, workers: list[Worker], clock: Clock,
           allocations: dict[str, Any]) -> dict[str, Any]:
    warm, measured = Counts(), Counts()
    for w in workers:
        warm.merge(w.warm)
        measured.merge(w.measured)
    names = [c for c, _ in spec.commands]
    window_ns = max(clock.finished or [time.perf_counter_ns()]) - clock.measure_start
    warmup = {n: warm.ops.get(n, 0) + warm.errors.get(n, 0) for n in names}
    if spec.transaction:
        warmup.update(MULTI=warm.transactions, EXEC=warm.transactions)
    return {
        "format": "kvperf-client-result", "version": 1,
        "client": {"name": adapter.name, "library": adapter.library,
                   "version": adapter.version, "language": "python",
                   "runtime": f"{platform.python_implementation()} {platform.python_version()}"},
        "duration_s": round(max(window_ns, 1) / 1e9, 6),
        "warmup": warmup,
        "commands": {n: {"ops": measured.ops.get(n, 0), "errors": measured.errors.get(n, 0),
                         "histogram": _histogram(measured.latency.get(n, {1: 0}))}
                     for n in names},
        "transactions": measured.transactions,
        "first_error": measured.first_error or warm.first_error,
        "allocations": allocations,
        **({"rate": spec.raw["rate"]} if spec.raw.get("rate") else {}),
        **({"cpu": cpu} if (cpu := _cpu(clock)) is not None else {}),
    }


def check_rate(rate: Any) -> None:
    """The spec's open loop, if any: ``{"rps": > 0, "arrivals": uniform|poisson}``."""
    if rate is None:
        return
    if (not isinstance(rate, dict) or not isinstance(rate.get("rps"), int | float)
            or isinstance(rate.get("rps"), bool) or not rate["rps"] > 0
            or rate.get("arrivals") not in ("uniform", "poisson")):
        raise Unsupported(f"rate must be {{\"rps\": > 0, \"arrivals\": \"uniform\" or "
                          f"\"poisson\"}}, not {rate!r}")


def main(adapter: Adapter) -> None:
    """Read the spec (argv[1]), run, print the result; exit 2 for a spec this harness
    cannot run, 1 with a one-line reason for any other failure."""
    try:
        with open(sys.argv[1]) as f:
            spec = Spec(json.load(f))
        if spec.model not in adapter.models:
            raise Unsupported(f"concurrency model {spec.model} is not supported by "
                              f"{adapter.name} (it runs {', '.join(adapter.models)})")
        passed = spec.raw.get("allocation_ops", DEFAULT_ALLOCATION_OPS)
        if type(passed) is not int or passed < 1:
            raise Unsupported(f"allocation_ops must be an integer >= 1, not {passed!r}")
        check_rate(spec.raw.get("rate"))
        workers = [Worker(spec, i, operations(spec, i)) for i in range(spec.workers)]
        clock_box: list[Clock] = []
        if adapter.make_async is not None:
            allocations = asyncio.run(_tasks(spec, adapter, workers, clock_box))
        else:
            allocations = _threads(spec, adapter, workers, clock_box)
        document = result(spec, adapter, workers, clock_box[0], allocations)
    except Unsupported as exc:
        print(f"{adapter.name}: {exc}", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:
        print(f"{adapter.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
    json.dump(document, sys.stdout)
    sys.stdout.write("\n")
