"""CPU vulnerability mitigations: which cost a load generator, on canned sysfs entries."""

from __future__ import annotations

import pytest

from kvperf.server.mitigations import boot_setting, classify, how, mitigations_fact

# /sys/devices/system/cpu/vulnerabilities of an AMD EPYC KVM guest (kernel 6.18), abridged
AMD_GUEST = {
    "meltdown": "Not affected",
    "spectre_v1": "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
    "spectre_v2": "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not "
                  "affected; BHI: Not affected",
    "spec_store_bypass": "Vulnerable",
    "spec_rstack_overflow": "Vulnerable: Safe RET, no microcode",
    "mds": "Not affected",
}
# an older Intel host booted with mitigations=off
INTEL_OFF = {
    "meltdown": "Vulnerable",
    "mds": "Vulnerable; SMT vulnerable",
    "spectre_v2": "Vulnerable; IBPB: disabled; STIBP: disabled; PBRSB-eIBRS: Not affected",
}


@pytest.mark.parametrize(("name", "text", "kind"), [
    ("meltdown", "Mitigation: PTI", "costly"),
    ("mds", "Mitigation: Clear CPU buffers; SMT vulnerable", "costly"),
    ("spectre_v1", AMD_GUEST["spectre_v1"], "cheap"),
    ("spec_store_bypass", "Mitigation: Speculative Store Bypass disabled via prctl", "cheap"),
    ("spec_rstack_overflow", "Vulnerable: Safe RET, no microcode", "costly"),
    ("spectre_v2", INTEL_OFF["spectre_v2"], "vulnerable"),
    ("mds", "Not affected", "not affected"),
    ("tsa", "Unknown: no microcode", "other"),
])
def test_classify(name: str, text: str, kind: str) -> None:
    assert classify(name, text) == kind


def test_how_and_boot_setting() -> None:
    assert how(AMD_GUEST["spectre_v2"]) == "Retpolines"
    assert how("Mitigation: PTI") == "PTI"
    assert boot_setting("console=ttyS0 mitigations=auto,nosmt quiet") == "auto,nosmt"
    assert boot_setting("console=ttyS0") is None


def test_costly_mitigations_warn_and_are_named() -> None:
    fact = mitigations_fact(AMD_GUEST, "mitigations=auto quiet")
    assert fact.status == "warn"
    assert fact.value["costly"] == {"spec_rstack_overflow": "Safe RET, no microcode",
                                    "spectre_v2": "Retpolines"}
    assert fact.value["boot"] == "auto" and fact.value["entries"] == AMD_GUEST
    assert fact.text.startswith("costly: spec_rstack_overflow (Safe RET, no microcode); "
                                "spectre_v2 (Retpolines); ")
    assert "1 cheap, 1 vulnerable, 2 not affected" in fact.text
    assert "load tool" in fact.hint and "mitigations=off" in fact.hint


def test_mitigations_off_is_ok_and_missing_directory_unknown() -> None:
    off = mitigations_fact(INTEL_OFF, "mitigations=off")
    assert (off.status, off.value["costly"], off.value["boot"]) == ("ok", {}, "off")
    assert off.text == "3 vulnerable"
    assert mitigations_fact(None, "").status == "unknown"
