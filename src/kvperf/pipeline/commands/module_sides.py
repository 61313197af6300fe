"""``--module-repo R`` on ``compare`` and ``run --commits``: the flags checked into one
request (pipeline/module_sides.py) before any build — a module-scenario config is needed,
refs counted, the server binary fixed (``--server-bin``, ``--valkey-path`` or the embedded
default), and ``{server_src}`` known when the server comes from a source tree."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kvperf.analysis.comparison import MetricComparison, compare_paired
from kvperf.analysis.instructions import SeriesInstructions, compare_instructions
from kvperf.analysis.verdict import Verdict
from kvperf.config.scenarios import load_module_config, select
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.pipeline.bisect import BisectResult
from kvperf.pipeline.commands.checks import (
    build_request,
    checked_runs,
    interference_policy,
    min_effect,
    names,
    refuse_module_measure,
    store_request,
    water_line_rule,
)
from kvperf.pipeline.commands.outputs import (
    Differentials,
    Profiled,
    differential_flamegraphs,
    listed,
    profile_artifacts,
    write_report,
)
from kvperf.pipeline.module_bisect import ModuleBisectHooks, run_module_bisect
from kvperf.pipeline.module_sides import ModuleSides, ModuleSidesHooks, run_module_sides
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.module_sides import ModuleSidesFlags, ModuleSidesRequest, ModuleSource
from kvperf.pipeline.request.options import ModuleOptions
from kvperf.pipeline.request.sides import default_label
from kvperf.pipeline.run.modules import check_module_measure
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.world import World
from kvperf.report.comparison import PAIRED_NOTE, markdown
from kvperf.report.instructions import markdown as instruction_markdown
from kvperf.results.row import Row, is_ok
from kvperf.sourcebuild.builder import find_server


def _server(flags: ModuleSidesFlags) -> tuple[str | None, Path | None]:
    """The fixed server binary and the source tree behind it, if known."""
    given = [f for f, v in (("--server-bin", flags.server_bin), ("--valkey-path",
             flags.valkey_path), ("--server-ref", flags.server_ref)) if v is not None]
    if len(given) > 1:
        raise UsageError(f"give one server for every module build: {' or '.join(given)}")
    if flags.valkey_path is None:
        env = os.environ.get("KVPERF_SERVER_SRC")
        return flags.server_bin, Path(env) if env else None
    server = find_server(flags.valkey_path)
    if server is None:
        raise UsageError(f"--valkey-path {flags.valkey_path}: no built valkey-server in "
                         "src/ (build it first: make -C DIR)")
    return str(server), flags.valkey_path.resolve()


def module_sides_request(flags: ModuleSidesFlags) -> ModuleSidesRequest:
    """The checked request (UsageError or ConfigError, exit 2)."""
    if flags.module_config is None:
        raise UsageError("--module-repo needs --module-config FILE (the scenarios each "
                         "module build runs)")
    if flags.kind == "compare" and len(flags.refs) != 2:
        raise UsageError(f"compare --module-repo needs two module refs (A then B), got "
                         f"{len(flags.refs)}")
    if not flags.refs:
        raise UsageError("--module-repo needs module refs (--commits REF …)")
    refuse_module_measure(flags.measure)
    config = load_module_config(flags.module_config)
    selected = select(config, names(flags.groups), names(flags.scenarios))
    check_module_measure(config, selected, flags.measure)  # before any build
    server_bin, server_src = _server(flags)
    runs = checked_runs(flags.runs if flags.runs is not None else
                        (8 if flags.kind == "compare" else 1))
    store = store_request(flags.store, live=True)
    options = ModuleOptions(config, selected, flags.store.results_dir, None, server_bin,
                            flags.module, flags.module_paths, quick=flags.quick,
                            measure=flags.measure)
    cache = build_request(flags.builds, tree=Path(".")).cache
    server_build = (build_request(flags.builds) if flags.server_ref is not None else None)
    source = ModuleSource(flags.repo, flags.build, flags.artifact, cache, flags.builds.jobs,
                          server_src)
    out_dir = flags.store.results_dir / (flags.label or default_label(f"module-{flags.kind}"))
    return ModuleSidesRequest(flags.refs, source, options, runs, out_dir, flags.seed, store,
                              interference_policy(flags.interference, retry_default=True),
                              server_build, flags.server_ref,
                              rule=water_line_rule(flags.water_line),
                              min_effect=min_effect(flags.min_effect), metrics=flags.metrics,
                              output=flags.output,
                              fail_on_regression=flags.fail_on_regression)


class ModuleSidesCommandHooks(ModuleSidesHooks, Protocol):
    """What compare/run --module-repo report while they work."""


@dataclass
class ModuleSidesRan:
    """Module refs run as sides on one server: each side's rows (and why a side did not
    run), compare's verdicts, what was written; exit 1 when a run failed or (with
    --fail-on-regression) a metric regressed."""

    sides: list[tuple[str, str, list[Row], str | None]]  # (side, title, rows, why not run)
    out_dir: Path
    seed: int
    failed: int
    names: tuple[str, str] | None = None  # compare: "A ref", "B ref"
    verdicts: list[MetricComparison] = field(default_factory=list)
    instructions: list[SeriesInstructions] | None = None  # compare --measure instructions
    report: Path | None = None
    profile: Profiled | None = None
    counted: Differentials | None = None  # --measure instructions: the instruction flamegraphs
    differentials: list[Differentials] = field(default_factory=list)  # profiled rows'
    regressed: bool = False
    fail_on_regression: bool = False
    result: SidesResult | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.failed or (self.regressed and self.fail_on_regression) else 0

    def check_store(self) -> None:
        if self.result is not None:
            self.result.check_store()


def run_sides(request: ModuleSidesRequest, kind: str, world: World,
              hooks: ModuleSidesHooks) -> ModuleSidesRan:
    """The module refs built and run interleaved; compare's sides judged (module doc)."""
    ran = run_module_sides(request, world, hooks)
    rows = ran.result.rows
    found = ModuleSidesRan(
        [(name, _title(name, ran), rows[name],
          batch.reason.splitlines()[0] if batch.reason else None)
         for name, batch in ran.batches.items()],
        ran.out_dir, ran.result.seed,
        sum(1 for side in rows.values() for r in side if not is_ok(r)),
        fail_on_regression=request.fail_on_regression, result=ran.result)
    if kind == "compare":
        _judge(found, request, ran)
    return found


def _title(name: str, ran: ModuleSides) -> str:
    build = ran.builds[name]
    return (f"{name}: module {build.ref} ({build.sha[:12]}) · server "
            f"{ran.batches[name].run.binary.label}")


def _judge(found: ModuleSidesRan, request: ModuleSidesRequest, ran: ModuleSides) -> None:
    """compare: the verdicts (or instruction verdicts), the --output report, the profiles
    and the differential flamegraphs, as a server compare gives them."""
    rows = ran.result.rows
    a, b = rows["A"], rows["B"]
    names = (f"A {ran.builds['A'].ref}", f"B {ran.builds['B'].ref}")
    dirs = (ran.batches["A"].out_dir, ran.batches["B"].out_dir)
    found.names = names
    if ran.batches["A"].run.options.measure == Measure.INSTRUCTIONS:
        counted = compare_instructions(a, b, request.min_effect)
        found.instructions = counted
        found.regressed = any(m.decision.verdict is Verdict.REGRESSION
                              for s in counted for m in s.metrics)
        found.report = write_report(request.output, lambda: instruction_markdown(
            counted, *names, request.min_effect))
        found.counted = differential_flamegraphs(a, b, dirs, f"{names[1]} vs {names[0]}",
                                                 kind="instructions")
    else:
        verdicts = compare_paired(a, b, request.metrics, request.rule)
        found.verdicts = verdicts
        found.regressed = any(r.decision.verdict is Verdict.REGRESSION for r in verdicts)
        found.report = write_report(request.output, lambda: markdown(verdicts, [], *names,
                                                               note=PAIRED_NOTE))
    if any(r.get("profile") for r in a + b):  # the config's profiling_sets
        found.profile = profile_artifacts(a + b, ran.out_dir)
        found.differentials = listed(differential_flamegraphs(
            a, b, dirs, f"{names[1]} vs {names[0]}"))


def bisect_modules(asked: BisectRequest, sides: ModuleSidesRequest, world: World,
                   hooks: ModuleBisectHooks) -> BisectResult:
    """`bisect GOOD BAD --module-repo R`: the module's commits bisected on one server."""
    return run_module_bisect(asked, sides, world, hooks)
