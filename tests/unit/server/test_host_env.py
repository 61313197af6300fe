"""server/host.py's environment facts for rows (SMT, turbo, mitigations) on a fake sysfs
tree, and the facts every row's env now holds on this machine."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.host import host_facts, mitigations, smt, turbo


def _tree(tmp_path: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    return str(tmp_path)


def test_turbo_from_intel_pstate_then_boost(tmp_path: Path) -> None:
    assert turbo(_tree(tmp_path / "a", {"intel_pstate/no_turbo": "1"})) == "off"
    assert turbo(_tree(tmp_path / "b", {"cpufreq/boost": "1"})) == "on"
    assert turbo(str(tmp_path / "none")) == "unknown"


def test_smt_and_mitigations(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"smt/control": "on", "vulnerabilities/meltdown": "Mitigation: PTI",
                            "vulnerabilities/mds": "Not affected", "cmdline": "ro quiet"})
    assert smt(root) == "on"
    text = mitigations(root, f"{root}/cmdline")
    assert "costly: meltdown (PTI)" in text and "1 not affected" in text
    (tmp_path / "cmdline").write_text("ro mitigations=off\n")
    assert mitigations(root, f"{root}/cmdline").startswith("mitigations=off; ")


def test_host_facts_hold_the_environment_facts() -> None:
    facts = host_facts()
    for key in ("governor", "smt", "turbo", "mitigations", "microcode", "kvperf", "kernel"):
        assert isinstance(facts[key], str) and facts[key], key
