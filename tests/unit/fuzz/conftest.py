"""The property tests' budget: profile ``ci`` (200 examples a property, the default) or
``long`` (10,000: ``HYPOTHESIS_PROFILE=long``, what ``scripts/fuzz`` runs). No deadline:
the machine is shared, and a slow example is not a failure of the reader."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow,
                                                       HealthCheck.function_scoped_fixture]}
settings.register_profile("ci", max_examples=200, **_COMMON)
settings.register_profile("long", max_examples=10_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
