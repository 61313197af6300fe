"""`kvperf run --commits A B … [--baseline C]`: every commit built and run interleaved
(pipeline/sides/interleaved.py); each commit's rows, every commit against the baseline
(paired verdicts), the profile artifacts, where the results are."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvperf.analysis.comparison import MetricComparison, compare_paired
from kvperf.pipeline.commands.outputs import Profiled, profile_artifacts
from kvperf.pipeline.request.run import CommitsRequest
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.interleaved import SidesHooks
from kvperf.pipeline.sides.interleaved import run_commits as run_interleaved_commits
from kvperf.pipeline.world import World
from kvperf.results.row import Row


@dataclass
class CommitsRan:
    """Each commit's rows under its title, the comparisons with the baseline ((base, name,
    verdicts)), where the results are; ``built_only``: --dry-run built them and ran
    nothing."""

    built_only: bool = False
    sides: list[tuple[str, list[Row]]] = field(default_factory=list)  # (title, rows)
    baseline: list[tuple[str, str, list[MetricComparison]]] = field(default_factory=list)
    profile: Profiled | None = None
    directories: str = ""
    seed: int = 0
    failed: int = 0

    @property
    def rows(self) -> list[Row]:
        return [r for _, rows in self.sides for r in rows]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def run_commits(request: CommitsRequest, world: World, hooks: SidesHooks) -> CommitsRan:
    """The commits built, run interleaved and compared with the baseline (module doc)."""
    done = run_interleaved_commits(request, world, hooks)
    if done is None:
        return CommitsRan(built_only=True)
    result, plan = done
    return CommitsRan(
        sides=[(f"{name} · {plan.sides[name].context.commit}", rows)
               for name, rows in result.rows.items()],
        baseline=_against_baseline(result) if request.baseline else [],
        profile=profile_artifacts([r for rows in result.rows.values() for r in rows],
                                  plan.out_dir),
        directories=", ".join(str(p.out_dir) for p in plan.sides.values()),
        seed=result.seed, failed=result.failed)


def _against_baseline(result: SidesResult) -> list[tuple[str, str, list[MetricComparison]]]:
    base, *others = list(result.rows)
    return [(f"baseline {base}", name, compare_paired(result.rows[base], result.rows[name],
                                                      "all")) for name in others]
