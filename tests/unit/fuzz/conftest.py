"""The property tests' budget: profile ``ci`` (200 examples a property, the same ones every
run; the default) or ``long`` (10,000 drawn afresh: ``HYPOTHESIS_PROFILE=long``, what
``scripts/fuzz`` runs). No deadline: the machine is shared, and a slow example is not a
failure of the reader."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow,
                                                       HealthCheck.function_scoped_fixture]}
# CI's examples are the same on every run (derandomize): a property that finds something new
# there would fail a change that did not cause it; the long profile explores at random.
settings.register_profile("ci", max_examples=200, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=10_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
