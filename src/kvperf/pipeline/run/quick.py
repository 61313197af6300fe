"""Quick mode (``KVPERF_QUICK=1``, or ``kvperf run --quick``): a smoke run of any command
in a fraction of its time — every trial measures 0.5 s (or at most 20,000 requests), without
warmup, and at most two rounds (a config object with ``faults`` keeps its duration, which
its faults are timed into); a definition's ``--test-time`` is overridden to 1 s (memtier's
is whole seconds; its request-bound clients and its preload run as defined), and a module
scenario, a rate sweep's points and its closed loop measure 1 s. For smoke tests of configs and of
the documented examples; its numbers are not for publishing (every row records ``quick`` in
``env``)."""

from __future__ import annotations

import os
from dataclasses import replace

from kvperf.config.model import BenchmarkSpec
from kvperf.config.scenarios import Scenario

ENV = "KVPERF_QUICK"
TRIAL_SECONDS = 0.5  # a config trial's measure stage
SECONDS = 1  # a definition's test time, a module scenario's and a rate sweep point's
REQUESTS = 20_000
MAX_RUNS = 2


def enabled(forced: bool = False) -> bool:
    """Whether quick mode is on: ``forced`` (``--quick``) or the environment says so."""
    return forced or os.environ.get(ENV, "").strip().lower() in ("1", "yes", "true")


def shrink(specs: list[BenchmarkSpec], forced: bool = False,
           swept: bool = False) -> list[BenchmarkSpec]:
    """Specs with short measure stages and no warmup (unchanged when quick mode is off). A
    spec with ``faults`` keeps its duration: its faults are timed into it. A swept spec
    (``swept``: ``--rate-sweep``; or its own ``rate_sweep``) measures its closed loop for
    SECONDS, as long as its points: the points' rates are fractions of its rps (a 0.5 s
    closed loop without warmup read high, and an 80% point fell 5% short of its rate)."""
    if not enabled(forced):
        return specs
    return [replace(s, warmup=(0,),
                    duration=(SECONDS if swept or s.rate_sweep else TRIAL_SECONDS,)
                    if s.duration and not s.faults else s.duration,
                    requests=tuple(min(n, REQUESTS) for n in s.requests) if s.requests
                    else None)
            for s in specs]


def shrink_scenario(s: Scenario, forced: bool = False) -> Scenario:
    """A module scenario measured 1 s (or ≤ 20,000 rows/requests) without warmup."""
    if not enabled(forced):
        return s
    return replace(s, warmup=0, duration=SECONDS if s.duration else None,
                   requests=min(s.requests, REQUESTS) if s.requests else None,
                   maxdocs=min(s.maxdocs or REQUESTS, REQUESTS) if s.dataset else s.maxdocs)


def test_time(override: int | None, forced: bool = False) -> int | None:
    """A definition's ``--override-test-time``: at most SECONDS in quick mode (also when
    none was given), else as given."""
    if not enabled(forced):
        return override
    return SECONDS if override is None else min(override, SECONDS)


def runs(requested: int, forced: bool = False) -> int:
    """Rounds to run: capped at MAX_RUNS in quick mode."""
    return min(requested, MAX_RUNS) if enabled(forced) else requested
