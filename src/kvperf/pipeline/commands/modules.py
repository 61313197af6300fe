"""`kvperf run --module-config FILE` (the seed's module-test format, ``test_groups`` →
``scenarios``): the plan with --dry-run, else every selected scenario run
(pipeline/run/single.py) with the profile artifacts of its config's ``profiling_sets``.
Exit codes: 0 when every scenario ran, 1 when one failed, 2 for bad input."""

from __future__ import annotations

from dataclasses import dataclass

from kvperf.pipeline.commands.outputs import Ran, ran
from kvperf.pipeline.request.run import ModulesRequest
from kvperf.pipeline.run.single import ScenarioHooks
from kvperf.pipeline.run.single import run_modules as run_scenarios
from kvperf.pipeline.world import World


@dataclass
class ModulesOutcome:
    """The plan (--dry-run: the request's config and selection show it) or the run."""

    request: ModulesRequest
    ran: Ran | None = None

    @property
    def exit_code(self) -> int:
        return self.ran.exit_code if self.ran is not None else 0


def run_modules(request: ModulesRequest, world: World, hooks: ScenarioHooks
                ) -> ModulesOutcome:
    """The scenarios planned (--dry-run) or run (module doc)."""
    if request.dry_run:
        return ModulesOutcome(request)
    done = run_scenarios(request, world, hooks)
    title = f"{done.run.context.label} · kvload {done.run.context.tool_version}"
    return ModulesOutcome(request, ran(done.persisted, title, done.run.out_dir))
