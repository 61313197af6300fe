"""``--profile``: perf record on every server node for exactly the measure stage.

``check_profile`` rejects what cannot be profiled (exit 2) before any server starts;
``profiling`` wraps the measure stage like ``instructions.counting``; ``profile_result``
turns each node's perf.data into perf script text, folded stacks and a flamegraph SVG
(kvflame, kvperf's inferno-based renderer installed beside kvload) plus the top self-CPU
symbols and DSOs. Profiled rows carry a ``profile`` object and stay out of timing
statistics: sampling perturbs throughput and latency.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvperf.core.errors import CommandError, ServerError, UsageError
from kvperf.core.kinds import Measure, Mode
from kvperf.core.proc import run
from kvperf.driver.registry import find_tool
from kvperf.pipeline.model import ProfileSettings, RunOptions
from kvperf.results.profile import node_profile
from kvperf.server import perf_record

KVFLAME = "kvflame"


def kvflame_path() -> Path:
    path = find_tool(KVFLAME, None, None)
    if path is None:
        raise UsageError("--profile: kvflame (kvperf's flamegraph renderer, crates/kvflame) "
                         "is not installed; reinstall kvperf (scripts/install.sh)")
    return path


def check_profile(options: RunOptions) -> None:
    """Exit 2 (UsageError) when ``--profile`` cannot work with these options or here."""
    check_settings(options.profile, client_mode=options.mode == Mode.CLIENT,
                   measure=options.measure)


def check_settings(settings: ProfileSettings | None, *, client_mode: bool,
                   measure: Measure = Measure.TIMING) -> None:
    """Exit 2 (UsageError) when ``--profile`` cannot profile these servers or here."""
    if settings is None:
        return
    if client_mode:
        raise UsageError("--profile records the servers kvperf starts; it cannot be used "
                         "with --mode client/--use-running-server")
    if measure != Measure.TIMING:
        raise UsageError(f"--profile cannot be combined with --measure {measure}: "
                         "both attach to the server for the measure stage")
    if settings.call_graph not in perf_record.CALL_GRAPHS:
        raise UsageError(f"--profile-call-graph must be one of "
                         f"{', '.join(perf_record.CALL_GRAPHS)}")
    if not 1 <= settings.frequency <= 100_000:
        raise UsageError(f"--profile-frequency must be 1-100000 Hz, got {settings.frequency}")
    reason = perf_record.unavailable(perf_record.paranoid_level(), perf_record.is_root())
    if reason:
        raise UsageError(f"--profile: {reason}")
    kvflame_path()


@dataclass
class Profiled:
    """The recordings of one measure stage, one per node."""

    settings: ProfileSettings | None = None
    data: list[Path] = field(default_factory=list)
    note: str | None = None


@contextlib.contextmanager
def profiling(settings: ProfileSettings | None, pids: list[int],
              log_dir: Path) -> Iterator[Profiled]:
    """Record every node for the duration of the ``with`` body (nothing when not profiled)."""
    profiled = Profiled(settings)
    if settings is None or not pids:
        yield profiled
        return
    note = perf_record.kernel_stacks_note(perf_record.paranoid_level(), perf_record.is_root())
    profiled.note = note
    recorders: list[perf_record.PerfRecorder] = []
    try:
        for node, pid in enumerate(pids):
            data = log_dir / f"perf-node{node}.data"
            recorders.append(perf_record.PerfRecorder(pid, data, settings.frequency,
                                                      settings.call_graph, note is None))
        for recorder in recorders:
            recorder.start()
        yield profiled
    except BaseException:
        for recorder in recorders:  # the measure stage's error is the one to report
            with contextlib.suppress(ServerError):
                recorder.stop()
        raise
    for recorder in recorders:
        recorder.stop()
        profiled.data.append(recorder.data)


def _render(data: Path, title: str) -> dict[str, Path]:
    """perf.data → perf script text → folded stacks → SVG (each file beside perf.data)."""
    stem = data.with_suffix("")
    files = {"perf.data": data, "perf script": stem.with_suffix(".script"),
             "folded stacks": stem.with_suffix(".folded"),
             "flamegraph": stem.with_suffix(".svg")}
    perf_record.perf_script(data, files["perf script"])
    kvflame = str(kvflame_path())
    run([kvflame, "collapse", str(files["perf script"]), str(files["folded stacks"])],
        name="kvflame collapse").check()
    if files["folded stacks"].stat().st_size == 0:  # an idle node: no samples, no graph
        del files["flamegraph"]
        return files
    run([kvflame, "svg", str(files["folded stacks"]), str(files["flamegraph"]), title],
        name="kvflame svg").check()
    return files


def _node(node: int, data: Path, title: str, out_dir: Path) -> dict[str, Any]:
    files = _render(data, f"{title} · node {node}")
    symbols = perf_record.perf_report(data, "sym")
    dsos = perf_record.perf_report(data, "dso")
    report = data.with_suffix(".report.txt")
    report.write_text(symbols + "\n" + dsos)
    files["perf report"] = report
    profile = node_profile(node, {k: str(p.relative_to(out_dir)) for k, p in files.items()},
                           symbols, dsos)
    if "flamegraph" not in files:
        profile["note"] = "no samples in the measure stage (the node was idle or it was short)"
    return profile


def profile_result(profiled: Profiled, title: str, out_dir: Path) -> dict[str, Any] | None:
    """The row's ``profile`` object (None when not profiled); ServerError when a step fails."""
    settings = profiled.settings
    if settings is None or not profiled.data:
        return None
    try:
        nodes = [_node(i, data, title, out_dir) for i, data in enumerate(profiled.data)]
    except CommandError as exc:
        raise ServerError(f"profile of {title}: {exc}") from None
    return {"profiler": "perf", "event": perf_record.EVENT, "mode": "cpu",
            "frequency": settings.frequency, "call_graph": settings.call_graph,
            "kernel_stacks": profiled.note is None, "note": profiled.note, "nodes": nodes}
