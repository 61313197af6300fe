"""`kvperf trace stats TRACE` and `kvperf trace anonymize IN OUT` (docs/TRACES.md): what a
recorded trace holds (analysis/trace_stats.py), written as JSON when asked, with a
synthetic workload approximating it (``--emit-workload``, analysis/trace_workload.py); and
a copy safe to share, keys and values replaced by deterministic stand-ins
(driver/trace_anonymize.py). A bad trace is a ConfigError (exit 2) with the byte offset."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kvperf.analysis.trace_stats import TraceStats, stats
from kvperf.analysis.trace_workload import TOOLS, Workload, emit
from kvperf.core.errors import UsageError
from kvperf.driver import trace_format
from kvperf.driver.trace_anonymize import anonymize_counting

__all__ = ["TOOLS", "Anonymized", "Inspected", "trace_anonymize", "trace_stats"]


@dataclass(frozen=True)
class Inspected:
    """A trace's statistics, and (--emit-workload) the command line approximating it."""

    stats: TraceStats
    workload: Workload | None = None


def trace_stats(trace: Path, *, emit_workload: str | None = None, json_file: Path | None = None
            ) -> Inspected:
    """`kvperf trace stats`: the trace read and summarized; ``emit_workload``: the workload
    of that tool (one of TOOLS; UsageError for a trace without commands); ``json_file``:
    the statistics written there too."""
    read = trace_format.read(trace)
    found = stats(read)
    workload = None
    if emit_workload is not None:
        if not read.records:
            raise UsageError(f"{trace} holds no commands: no workload to emit")
        try:
            workload = emit(emit_workload, read, found)
        except ValueError as e:
            raise UsageError(f"{trace}: {e}") from None
    if json_file is not None:
        json_file.write_text(json.dumps(found.as_json(), indent=2) + "\n")
    return Inspected(found, workload)


@dataclass(frozen=True)
class Anonymized:
    """The copy written: its commands, whether each key's cluster slot was kept, and the
    keys kept as they are (too few characters to change within their slot)."""

    out: Path
    commands: int
    keep_slots: bool
    kept: list[bytes]


def trace_anonymize(trace: Path, out: Path, *, salt: str, keep_slots: bool) -> Anonymized:
    """`kvperf trace anonymize`: the copy written to ``out``, the original kept (UsageError
    when they are one file)."""
    if out.resolve() == trace.resolve():
        raise UsageError("OUT must differ from IN (the original is kept)")
    made, kept = anonymize_counting(trace_format.read(trace), salt.encode(), keep_slots)
    trace_format.write(out, made)
    return Anonymized(out, len(made.records), keep_slots, kept)
