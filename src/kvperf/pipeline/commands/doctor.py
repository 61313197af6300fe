"""`kvperf doctor`: what this machine offers for benchmarking. ``doctor_request`` checks
--sample before the machine is probed; ``doctor`` probes it (servers, load tools, profiling,
CPUs, kernel, noisy neighbours sampled for ``sample`` seconds) and returns the sections for
the CLI to show as a table or JSON. Informational: nothing it finds is an error."""

from __future__ import annotations

from dataclasses import dataclass

from kvperf.core.errors import UsageError
from kvperf.pipeline.read.doctor import examine
from kvperf.pipeline.request.stored import DoctorRequest
from kvperf.server.fact import Section
from kvperf.server.machine_probe import MachineProbe


def doctor_request(*, json: bool, sample: float) -> DoctorRequest:
    if not 0.0 <= sample <= 60.0:
        raise UsageError(f"--sample must be between 0 and 60 seconds, got {sample}")
    return DoctorRequest(json, sample)


@dataclass(frozen=True)
class Examined:
    """The machine's facts, one section per block of the table, in display order."""

    sections: list[Section]


def doctor(request: DoctorRequest) -> Examined:
    return Examined(examine(MachineProbe(sample_seconds=request.sample)))
