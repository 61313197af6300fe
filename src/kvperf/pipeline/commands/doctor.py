"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from kvperf.core.errors import UsageError
from kvperf.pipeline.request.stored import DoctorRequest


def doctor_request(*, json: bool, sample: float) -> DoctorRequest:
    if not 0.0 <= sample <= 60.0:
        raise UsageError(f"--sample must be between 0 and 60 seconds, got {sample}")
    return DoctorRequest(json, sample)
