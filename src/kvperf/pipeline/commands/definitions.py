"""`kvperf run --definitions PATH… [selection]`: each plan or refusal with --dry-run, else
every runnable test run (pipeline/definitions/definition_runs.py), its KPIs as
``gates.json`` beside the results and the profile artifacts. Exit codes: 0 when every test
ran and every KPI passed, 1 when a test failed or a KPI did not hold, 2 when nothing could
run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.console import RenderableType

from kvperf.definitions.dryrun import render_result, render_summary, summarize
from kvperf.definitions.plan import Plan, Refusal, plans_of
from kvperf.pipeline.commands.outputs import Ran, ran
from kvperf.pipeline.definitions.definition_runs import DefinitionHooks
from kvperf.pipeline.definitions.definition_runs import run_definitions as run_tests
from kvperf.pipeline.definitions.definitions import benchmark_tools, unsupported
from kvperf.pipeline.request.run import DefinitionsRequest
from kvperf.pipeline.run.definition_work import DefinitionRun
from kvperf.pipeline.run.gates import GATES_FILE, write_kpi_gates
from kvperf.pipeline.world import World
from kvperf.results.row import Row


@dataclass
class DefinitionsOutcome:
    """The dry run's plans (``planned``), or the tests' rows (``ran``) and the KPIs'
    ``gates.json`` when any test had KPIs."""

    planned: list[RenderableType] = field(default_factory=list)
    ran: Ran | None = None
    gates_path: Path | None = None
    runnable: int = 0  # the dry run: the tests the run would start

    @property
    def exit_code(self) -> int:
        if self.ran is not None:
            return self.ran.exit_code
        return 0 if self.runnable else 2


def run_definitions(request: DefinitionsRequest, world: World, hooks: DefinitionHooks
                    ) -> DefinitionsOutcome:
    """The definitions' tests planned (--dry-run) or run (module doc)."""
    if request.dry_run:
        return _dry_run(request.planned)
    done = run_tests(request, world, hooks)
    run = done.run
    summary = done.persisted.summary
    title = (f"{run.context.label} · {_tools(summary.rows, run)}"
             if summary is not None else "")
    found = DefinitionsOutcome(ran=ran(done.persisted, title, run.out_dir))
    if summary is not None and write_kpi_gates(summary.rows, run.out_dir):
        found.gates_path = run.out_dir / GATES_FILE
    return found


def _dry_run(planned: tuple[Plan | Refusal, ...]) -> DefinitionsOutcome:
    """Each plan or refusal, the refusals this host makes at run time (run_definitions'
    ``unsupported``: a client tool absent or too old) as refusals, and the summary."""
    plans = plans_of(planned)
    tools = benchmark_tools(plans)
    late = {id(p): Refusal(p.definition, p.topology.name, why)
            for p in plans if (why := unsupported(p, tools)) is not None}
    shown = tuple(late.get(id(r), r) for r in planned)
    return DefinitionsOutcome([*map(render_result, shown), render_summary(summarize(shown))],
                              runnable=len(plans) - len(late))


def _tools(rows: list[Row], run: DefinitionRun) -> str:
    """The load tools the tests ran (a redis-benchmark definition's is not memtier's front
    end), else the memtier front end the run found."""
    used = dict.fromkeys(tool for row in rows
                         for tool in (row.get("definition") or {}).get("tools", []))
    return ", ".join(used) or f"{run.driver.name} {run.driver.version}"
