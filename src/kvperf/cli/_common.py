"""What every command handler gets — the two consoles and the World its work goes through —
and the hooks through which the library's workflows report progress to the terminal."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.cli._bisection import print_result, print_started, print_step
from kvperf.core.proc import LineSink
from kvperf.pipeline.commands.outputs import Ran
from kvperf.pipeline.commands.progress import (
    BisectLog,
    BisectResult,
    Build,
    DefinitionSides,
    Endpoint,
    ModuleBuild,
    Prepared,
    PreparedSides,
    Refused,
    Step,
)
from kvperf.pipeline.world import World
from kvperf.report.definitions import DefinitionProgress
from kvperf.report.progress import ProgressReporter
from kvperf.report.scenarios import ScenarioProgress


@dataclass(frozen=True)
class Cli:
    """A command's terminal and world: messages and progress on ``err`` (stderr), results
    on ``out`` (stdout, 220 columns when it is no terminal), work through ``world``."""

    err: Console
    out: Console
    world: World


class ConsoleHooks:
    """Every workflow's hooks (pipeline/builds, interleaved, single, definition_runs,
    bisect, regressions) on the terminal: build status lines, the sides' plan, progress
    bars, refused tests, the server's address, a bisection's steps."""

    def __init__(self, cli: Cli, show_password: bool = False) -> None:
        self.err, self.out = cli.err, cli.out
        self.show_password = show_password

    # builds
    def fetching(self, repo: str) -> contextlib.AbstractContextManager[object]:
        return self.err.status(f"fetching {escape(repo)}")

    @contextlib.contextmanager
    def building(self, ref: str, sha: str, make: str) -> Iterator[LineSink]:
        what = f"{escape(ref)} ({sha[:12]})"
        with self.err.status(f"building {what}: {escape(make)}") as status:
            yield lambda line: status.update(f"building {what}: "
                                             f"{escape(line.strip()[:100])}")

    def built(self, build: Build, cached: bool) -> None:
        what = f"{escape(build.ref)} ({(build.sha or '')[:12]})"
        if cached:
            self.err.print(f"build of {what}: cached")
        elif build.ok:
            self.err.print(f"build of {what}: {build.seconds:.0f} s (log: {build.log})")
        else:
            self.err.print(f"[red]build of {what} failed[/red] after {build.seconds:.0f} s: "
                           f"{escape(build.error or '')}", soft_wrap=True)

    @contextlib.contextmanager
    def checking(self, tree: Path) -> Iterator[LineSink]:
        with self.err.status(f"checking {tree}") as status:
            yield lambda line: status.update(f"building: {line[:100]}")

    def module_built(self, build: ModuleBuild) -> None:
        """As a server build's line, named a module's."""
        self.built(build.as_build(f"module {build.ref}"), build.cached)

    def tree_built(self, tree: Path, build: Build) -> None:
        if not build.cached:
            self.err.print(f"built {tree} in {build.seconds:.0f} s (log: {build.log})")

    # trials
    def planned(self, plan: PreparedSides) -> None:
        described = "  ".join(
            f"{escape(name)}: "
            + (escape(plan.labels.get(name, name)) if p.context.server_version
               else "not built")
            for name, p in plan.sides.items())
        self.err.print(f"{described}  rounds: {plan.request.runs}  order seed: {plan.seed}  "
                       f"schedule: {plan.request.schedule}")

    def progress(self, trials: int) -> ProgressReporter:
        return ProgressReporter(self.err, trials)

    def serving(self, prepared: Prepared) -> None:
        """The one time a generated password is shown (never logged, never written)."""
        password = prepared.options.password
        if self.show_password and password is not None:
            self.err.print(f"server password (shown only now): {password.reveal()}",
                           highlight=False, soft_wrap=True)

    def listening(self, endpoints: list[Endpoint]) -> None:
        for endpoint in endpoints:
            self.err.print(f"server listening on {endpoint}")
        self.err.print("press Ctrl-C to stop")

    # definitions and module scenarios
    def refused(self, refused: Refused) -> None:
        for name, topology, why in refused:
            self.err.print(f"[yellow]not run[/yellow] {escape(f'{name} [{topology}]: {why}')}",
                           soft_wrap=True)

    def tests(self) -> DefinitionProgress:
        return DefinitionProgress(self.err)

    def sides_planned(self, prepared: DefinitionSides, sides: int) -> None:
        self.err.print(f"{len(prepared.plans)} test(s) × {sides} sides × {prepared.rounds} "
                       f"round(s), order seed {prepared.seed}")

    def notes(self, notes: tuple[str, ...]) -> None:
        for note in notes:
            self.err.print(f"[yellow]note[/yellow]: {note}", soft_wrap=True, highlight=False)

    def scenarios(self) -> ScenarioProgress:
        return ScenarioProgress(self.err)

    # bisections
    def started(self, log: BisectLog, resumed: int) -> None:
        print_started(self.out, log, resumed)

    def step_finished(self, log: BisectLog, step: Step) -> None:
        print_step(self.out, log, step)

    def not_bisected(self, what: str, why: str) -> None:
        self.out.print(f"not bisected: {escape(what)}: {escape(why)}", highlight=False)

    def bisecting(self, what: str) -> None:
        self.out.print(f"bisecting {escape(what)}", highlight=False)

    def bisected(self, what: str, result: BisectResult) -> None:
        if result.differ:
            print_result(self.out, result)
        else:
            self.out.print(f"{escape(what)}: the two commits do not differ in this run",
                           highlight=False)


def print_interrupted(cli: Cli, ran: Ran, what: str) -> int:
    """An interrupted run: how many finished units were kept, where; exit 130."""
    cli.err.print(f"[yellow]interrupted[/yellow]: {ran.kept} finished {what} kept in "
                  f"{ran.path}")
    return ran.exit_code
