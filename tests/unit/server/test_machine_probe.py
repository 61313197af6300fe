"""Reading /proc and /sys for doctor, from a fake tree: the right files feed the right facts."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.fact import Fact
from kvperf.server.machine_probe import MachineProbe

CPU = "sys/devices/system/cpu"


def _tree(root: Path, files: dict[str, str]) -> MachineProbe:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return MachineProbe(root, sample_seconds=0.0)


def _by_key(facts: tuple[Fact, ...]) -> dict[str, Fact]:
    return {fact.key: fact for fact in facts}


def test_a_tuned_two_socket_host(tmp_path: Path) -> None:
    probe = _tree(tmp_path, {
        f"{CPU}/cpu0/cpufreq/scaling_governor": "performance",
        f"{CPU}/cpu1/cpufreq/scaling_governor": "powersave",
        f"{CPU}/intel_pstate/no_turbo": "1",
        f"{CPU}/smt/control": "on", f"{CPU}/smt/active": "1",
        f"{CPU}/cpu0/topology/thread_siblings_list": "0-1",
        f"{CPU}/cpu1/topology/thread_siblings_list": "0-1",
        f"{CPU}/isolated": "1", f"{CPU}/nohz_full": "1",
        "sys/devices/system/node/node0/cpulist": "0",
        "sys/devices/system/node/node1/cpulist": "1",
        f"{CPU}/vulnerabilities/meltdown": "Mitigation: PTI",
        "proc/cmdline": "quiet mitigations=auto",
    })
    facts = _by_key(probe.cpu_section().facts)
    assert facts["governor"].value == {"performance": [0], "powersave": [1]}
    assert (facts["turbo"].value, facts["turbo"].status) == (False, "ok")
    assert (facts["smt"].text, facts["smt"].status) == ("on (siblings 0-1)", "warn")
    assert facts["isolated_cpus"].value == [1]
    assert facts["numa"].value == {"node0": [0], "node1": [1]}
    assert facts["mitigations"].value["costly"] == {"meltdown": "PTI"}
    assert facts["mitigations"].value["boot"] == "auto"


def test_a_bare_vm_reports_unknowns_not_errors(tmp_path: Path) -> None:
    facts = _by_key(_tree(tmp_path, {"proc/loadavg": "0.00 0.01 0.05 1/90 77"})
                    .cpu_section().facts)
    for key in ("governor", "turbo", "smt", "isolated_cpus", "numa", "mitigations"):
        assert (facts[key].status, facts[key].text) == ("unknown", "unknown"), key
        assert facts[key].hint, key


def test_neighbours_from_loadavg_without_a_usable_sample(tmp_path: Path) -> None:
    probe = _tree(tmp_path, {"proc/loadavg": "0.00 0.01 0.05 1/90 77",
                             "proc/stat": "cpu  1 0 1 100 0 0 0 0 0 0"})
    (fact,) = probe.neighbours_section().facts
    assert fact.value["load_average"] == [0.0, 0.01, 0.05]
    assert "busy_percent" not in fact.value  # no time passed between the two reads
    assert fact.status == "ok"
