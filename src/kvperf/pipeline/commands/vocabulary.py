"""The words and numbers the commands' flags show in ``--help`` (defaults, choices, limits),
taken from the stages that own them, so the CLI — which imports only the commands layer,
the request types and report/ — says what the code does."""

from __future__ import annotations

from kvperf.analysis.bisect import COUNTED_METRICS, DEFAULT_RUNS, TIMING_METRICS
from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT
from kvperf.analysis.verdict import DEFAULT_WATER_LINE
from kvperf.config.model import ProfileSettings
from kvperf.config.rate_sweep import ARRIVALS, DEFAULT_POINT_SECONDS
from kvperf.pipeline.bisect import BUDGET_FACTOR
from kvperf.pipeline.run.duet import DUET_DEFAULT_SECONDS
from kvperf.pipeline.run.instructions import INSTRUCTION_REQUESTS
from kvperf.results.interference import DISTURBED_SHARE
from kvperf.server.perf_record import CALL_GRAPHS
from kvperf.server.remote import DEFAULT_PORTS, PORT_TRIES
from kvperf.sourcebuild.builder import DEFAULT_MAKE_ARGS

PROFILE_FREQUENCY = ProfileSettings.frequency
PROFILE_CALL_GRAPH = ProfileSettings.call_graph

__all__ = ["ARRIVALS", "BUDGET_FACTOR", "CALL_GRAPHS", "COUNTED_METRICS",
           "DEFAULT_MAKE_ARGS", "DEFAULT_MIN_EFFECT", "DEFAULT_POINT_SECONDS", "DEFAULT_PORTS",
           "DEFAULT_RUNS", "DEFAULT_WATER_LINE", "DISTURBED_SHARE", "DUET_DEFAULT_SECONDS",
           "INSTRUCTION_REQUESTS", "PORT_TRIES", "PROFILE_CALL_GRAPH", "PROFILE_FREQUENCY",
           "TIMING_METRICS"]
