"""``run --trace TRACE [--speed F|max] [--seed-from-trace]``: a recorded trace (kvload's
format or a MONITOR capture, docs/TRACES.md) replayed as the workload, ``--runs`` times on
fresh servers, rows stored as any trial's; ``compare --trace T --server-bin A --server-bin
B``: replayed on both servers, interleaved by round, judged by the one verdict rule (paired
by round). Exit codes: 0 when every replay ran, 1 when one failed, 2 for bad input (a bad
trace: kvload's message with the byte offset)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kvperf.analysis.comparison import MetricComparison, compare_paired
from kvperf.core.errors import UsageError
from kvperf.driver.trace_replay import Replay, check_speed
from kvperf.pipeline.commands.checks import interference_policy, store_request
from kvperf.pipeline.commands.outputs import Ran
from kvperf.pipeline.request.options import TraceOptions
from kvperf.pipeline.request.replay import TraceCompareRequest, TraceFlags, TraceRequest
from kvperf.pipeline.run.model import Observer
from kvperf.pipeline.run.trace_work import compare_trace, run_trace
from kvperf.pipeline.world import World

COMPARE_ROUNDS = 8  # compare --trace's default --runs


def _refuse_other_work(flags: TraceFlags) -> None:
    """A replay brings its own workload: flags that choose another are bad input."""
    for name in flags.others:
        raise UsageError(f"--{name} does not apply to --trace")
    if flags.refs:
        raise UsageError("compare --trace compares --server-bin binaries, not refs")


def trace_request(flags: TraceFlags) -> TraceRequest:
    """`run --trace` checked (run's default: no retry of disturbed replays)."""
    _refuse_other_work(flags)
    options = TraceOptions(flags.trace, Replay(flags.speed, flags.seed_from_trace),
                           flags.store.results_dir, flags.label,
                           flags.server_bins[0] if flags.server_bins else None,
                           flags.runs if flags.runs is not None else 1)
    return TraceRequest(options, store_request(flags.store, live=True),
                        interference_policy(flags.interference, retry_default=False))


def trace_compare_request(flags: TraceFlags) -> TraceCompareRequest:
    """`compare --trace` checked (compare's default: retry disturbed replays)."""
    _refuse_other_work(flags)
    if len(flags.server_bins) != 2:
        raise UsageError("compare --trace takes two --server-bin (A then B)")
    replay = Replay(flags.speed, flags.seed_from_trace)
    results = flags.store.results_dir
    sides = {name: TraceOptions(flags.trace, replay, results, f"trace-{name}", path, 1)
             for name, path in zip(("A", "B"), flags.server_bins, strict=True)}
    return TraceCompareRequest(
        sides, flags.runs if flags.runs is not None else COMPARE_ROUNDS,
        results / "trace-compare", store_request(flags.store, live=True),
        interference_policy(flags.interference, retry_default=True))


def replay(request: TraceRequest, world: World, observer: Callable[[], Observer]) -> Ran:
    """The trace replayed ``runs`` times, each row persisted as it finishes."""
    done = run_trace(request.options, request.store, world, observer, request.interference)
    context = done.run.context
    title = (f"{context.label} · kvload {context.tool_version} · trace sha256 "
             f"{done.run.trace.sha256[:12]}")
    note = done.run.trace.incomplete()
    return Ran(done.persisted.summary, done.persisted.kept, done.persisted.path, title,
               warnings=(note,) if note else ())


@dataclass
class ReplaysCompared:
    """Both sides' replays (``ran``) and the paired verdicts (``names``: A, B)."""

    ran: Ran
    names: tuple[str, str] = ("A", "B")
    verdicts: list[MetricComparison] = field(default_factory=list)


def compare_replays(request: TraceCompareRequest, world: World,
                    observer: Callable[[], Observer]) -> ReplaysCompared:
    """The rounds interleaved, then judged (module doc)."""
    done = compare_trace(request.sides, request.rounds, request.out_dir, request.store,
                         world, observer, request.interference)
    persisted = done.persisted
    note = next(iter(done.sides.sides.values())).trace.incomplete()
    found = ReplaysCompared(Ran(persisted.summary, persisted.kept, persisted.path,
                                warnings=(note,) if note else ()))
    if persisted.summary is not None:
        runs = done.sides.sides
        found.names = (f"A: {runs['A'].binary.display_name}",
                       f"B: {runs['B'].binary.display_name}")
        found.verdicts = compare_paired(done.rows("A"), done.rows("B"))
    return found


__all__ = ["check_speed", "compare_replays", "replay", "trace_compare_request",
           "trace_request"]
