"""``--profile``: perf record on every server node for exactly the measure stage.

``check_profile`` rejects what cannot be profiled (exit 2) before any server starts;
``profiling`` wraps the measure stage like ``instructions.counting``; ``profile_result``
turns each node's perf.data into perf script text, folded stacks and a flamegraph SVG
(kvflame, kvperf's inferno-based renderer installed beside kvload) plus the top self-CPU
symbols and DSOs. Profiled rows carry a ``profile`` object and stay out of timing
statistics: sampling perturbs throughput and latency.

A profile may cover a window of the measure stage (``delay`` seconds in, for ``duration``
seconds: ``--profile-delay``/``--profile-duration`` or a profiling set's ``delays``), and in
wall-time mode it weighs off-CPU time by the stack each thread blocked in
(results/walltime.py) beside the on-CPU samples.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.clients import profiling as clients_profiling
from kvperf.config.model import ProfileSettings
from kvperf.core.errors import CommandError, ServerError, UsageError
from kvperf.core.kinds import Measure, Mode, ProfileMode
from kvperf.core.proc import run
from kvperf.driver.registry import find_tool
from kvperf.pipeline.request.options import RunOptions
from kvperf.plan.trial import Trial
from kvperf.results import walltime
from kvperf.results.profile import dso_shares, node_profile, subject_nodes, with_names
from kvperf.results.records import ProfileNode, ProfileRecord
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
    if settings.delay < 0 or (settings.duration is not None and settings.duration <= 0):
        raise UsageError("--profile-delay must be ≥ 0 and --profile-duration > 0 seconds")
    level, root = perf_record.paranoid_level(), perf_record.is_root()
    reason = perf_record.unavailable(level, root) or (
        perf_record.wall_time_unavailable(level, root)
        if settings.mode == ProfileMode.WALL_TIME else None)
    if reason:
        raise UsageError(f"--profile: {reason}")
    kvflame_path()


def check_trial_profiles(options: RunOptions, trials: Sequence[Trial]) -> None:
    """The config's profiling sets, checked like ``--profile`` (exit 2 before any server)."""
    for settings in dict.fromkeys(t.profile for t in trials if t.profile):
        check_settings(settings, client_mode=options.mode == Mode.CLIENT,
                       measure=options.measure)


@dataclass
class Profiled:
    """The recordings of one measure stage, one per node."""

    settings: ProfileSettings | None = None
    names: dict[str, str] = field(default_factory=dict)  # perf_record.started_as
    data: list[Path] = field(default_factory=list)
    note: str | None = None
    window_opened: bool = True
    client: Path | None = None  # a client harness recorded from its exec (harness_argv)


class _Window(threading.Thread):
    """Enables sampling ``delay`` s into the measure stage and disables it ``duration`` s
    later, unless the stage ends first (``close``)."""

    def __init__(self, settings: ProfileSettings,
                 recorders: list[perf_record.PerfRecorder]) -> None:
        super().__init__(name="kvperf-profile-window", daemon=True)
        self.settings, self.recorders = settings, recorders
        self.closed = threading.Event()
        self.opened = False
        self.error: ServerError | None = None

    def run(self) -> None:
        try:
            if self.closed.wait(self.settings.delay):
                return
            for recorder in self.recorders:
                recorder.start()
            self.opened = True
            duration = self.settings.duration
            if duration is not None and not self.closed.wait(duration):
                for recorder in self.recorders:
                    recorder.pause()
        except ServerError as exc:
            self.error = exc

    def close(self) -> None:
        self.closed.set()
        self.join()
        if self.error:
            raise self.error


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
    profiled.names = perf_record.started_as(pids[0])
    recorders: list[perf_record.PerfRecorder] = []
    window: _Window | None = None
    try:
        for node, pid in enumerate(pids):
            data = log_dir / f"perf-node{node}.data"
            recorders.append(perf_record.PerfRecorder(
                pid, data, settings.frequency, settings.call_graph, note is None,
                settings.mode == ProfileMode.WALL_TIME))
        if settings.delay == 0 and settings.duration is None:  # the whole stage
            for recorder in recorders:
                recorder.start()
        else:
            window = _Window(settings, recorders)
            window.start()
        yield profiled
        if window is not None:
            window.close()
            profiled.window_opened = window.opened
    except BaseException:
        if window is not None:
            window.closed.set()
            window.join()
        for recorder in recorders:  # the measure stage's error is the one to report
            with contextlib.suppress(ServerError):
                recorder.stop()
        raise
    for recorder in recorders:
        recorder.stop()
        profiled.data.append(recorder.data)


def _fold(settings: ProfileSettings, files: dict[str, Path]) -> walltime.WallTime | None:
    """The perf script text → folded stacks: kvflame's collapse of the samples, or in
    wall-time mode kvperf's own folding with off-CPU intervals (returned)."""
    wall_time = settings.mode == ProfileMode.WALL_TIME
    perf_record.perf_script(files["perf.data"], files["perf script"], wall_time)
    if wall_time:
        wall = walltime.fold(files["perf script"].read_text(errors="replace"),
                             settings.frequency)
        files["folded stacks"].write_text(wall.render())
        return wall
    run([str(kvflame_path()), "collapse", str(files["perf script"]),
         str(files["folded stacks"])], name="kvflame collapse").check()
    return None


def _render(data: Path, title: str, settings: ProfileSettings
            ) -> tuple[dict[str, Path], walltime.WallTime | None]:
    """perf.data → perf script text → folded stacks → SVG (each file beside perf.data)."""
    stem = data.with_suffix("")
    files = {"perf.data": data, "perf script": stem.with_suffix(".script"),
             "folded stacks": stem.with_suffix(".folded"),
             "flamegraph": stem.with_suffix(".svg")}
    wall = _fold(settings, files)
    kvflame = str(kvflame_path())
    if files["folded stacks"].stat().st_size == 0:  # an idle node: no samples, no graph
        del files["flamegraph"]
        return files, wall
    if wall is not None:
        title += " · wall time (µs; [off-cpu] blocked, [preempted] waiting for a CPU)"
    run([kvflame, "svg", str(files["folded stacks"]), str(files["flamegraph"]), title],
        name="kvflame svg").check()
    return files, wall


def harness_argv(argv: list[str], data: Path, settings: ProfileSettings) -> list[str]:
    """A client harness's argv run under perf record from its exec (its whole process
    tree, start-up and warmup included: the harness times its own measure stage)."""
    kernel = perf_record.kernel_stacks_note(perf_record.paranoid_level(),
                                            perf_record.is_root()) is None
    return perf_record.launch_argv(argv, data, settings.frequency, settings.call_graph,
                                   kernel)


def _client_node(node: int, profiled: Profiled, title: str, out_dir: Path,
                 settings: ProfileSettings) -> ProfileNode:
    """The harness's part: rendered like a server node's, with its runtime's perf maps
    (clients/profiling.py) read, then moved beside its perf.data."""
    assert profiled.client is not None
    profile = _node(node, profiled.client, title, out_dir, settings, label="client")
    profile["role"] = "client"
    script = profiled.client.with_suffix(".script")
    moved = clients_profiling.keep_maps(
        clients_profiling.sampled_pids(script.read_text(errors="replace")),
        profiled.client.parent)
    for path in moved:
        profile["files"][path.name] = str(path.relative_to(out_dir))
    return profile


def _node(node: int, data: Path, title: str, out_dir: Path,
          settings: ProfileSettings, label: str | None = None) -> ProfileNode:
    files, wall = _render(data, f"{title} · {label or f'node {node}'}", settings)
    symbols = perf_record.perf_report(data, "sym")
    dsos = perf_record.perf_report(data, "dso")
    report = data.with_suffix(".report.txt")
    report.write_text(symbols + "\n" + dsos)
    files["perf report"] = report
    profile = node_profile(node, {k: str(p.relative_to(out_dir)) for k, p in files.items()},
                           symbols, dsos)
    if wall is not None:
        profile["wall_time"] = {"on_cpu_ms": round(wall.on_cpu_us / 1000, 3),
                                "off_cpu_ms": round(wall.off_cpu_us / 1000, 3),
                                "top_off_cpu": wall.top()}
    if "flamegraph" not in files:
        profile["note"] = "no samples in the measure stage (the node was idle or it was short)"
    return profile


def profile_result(profiled: Profiled, title: str, out_dir: Path) -> ProfileRecord | None:
    """The row's ``profile`` object (None when not profiled); ServerError when a step fails."""
    settings = profiled.settings
    if settings is None or not (profiled.data or profiled.client):
        return None
    try:
        nodes = [_node(i, data, title, out_dir, settings)
                 for i, data in enumerate(profiled.data)]
        if profiled.client is not None:
            nodes.append(_client_node(len(nodes), profiled, title, out_dir, settings))
    except CommandError as exc:
        raise ServerError(f"profile of {title}: {exc}") from None
    nodes = [node if node.get("role") == "client" else with_names(node, profiled.names)
             for node in nodes]  # the server as started
    note = profiled.note
    if not profiled.window_opened:
        note = (f"the measure stage ended before the profiling window opened "
                f"({settings.delay:g} s in): nothing was sampled")
    wall_time = settings.mode == ProfileMode.WALL_TIME
    event = perf_record.EVENT + (f" + {perf_record.SWITCH_EVENT}" if wall_time else "")
    return {"profiler": "perf", "event": event, "mode": str(settings.mode),
            "frequency": settings.frequency, "call_graph": settings.call_graph,
            "window": {"delay": settings.delay, "duration": settings.duration},
            "kernel_stacks": profiled.note is None, "note": note, "nodes": nodes,
            "dsos": dso_shares(subject_nodes(nodes))}
