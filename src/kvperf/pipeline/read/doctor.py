"""``kvperf doctor``: what this machine offers for benchmarking, gathered from server and driver.

The noise sample is taken first, while doctor itself is idle, so it sees other processes and
not doctor's own probes; it is still listed last.
"""

from __future__ import annotations

from kvperf.driver.discovery import tools_section
from kvperf.server.fact import Section
from kvperf.server.machine_probe import MachineProbe, servers_section


def examine(probe: MachineProbe | None = None) -> list[Section]:
    """Every section of the doctor table, in display order."""
    probe = probe or MachineProbe()
    neighbours = probe.neighbours_section()
    return [servers_section(), tools_section(), probe.profiling_section(),
            probe.cpu_section(), probe.kernel_section(), neighbours]
