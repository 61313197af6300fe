"""The types a command's hooks see while it works — builds, the sides' plan, a run's
server, refused tests, a bisection's log and steps — named here so the CLI, which renders
them, imports them from the commands layer."""

from __future__ import annotations

from kvperf.analysis.bisect_log import BisectLog, Step
from kvperf.pipeline.bisect import BisectResult
from kvperf.pipeline.definitions.definition_runs import Refused
from kvperf.pipeline.definitions.definition_sides import DefinitionSides
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.sides.sides import PreparedSides
from kvperf.server.resp import Endpoint
from kvperf.sourcebuild.builder import Build
from kvperf.sourcebuild.module_builder import ModuleBuild

__all__ = ["BisectLog", "BisectResult", "Build", "DefinitionSides", "Endpoint", "ModuleBuild",
           "Prepared", "PreparedSides", "Refused", "Step"]
