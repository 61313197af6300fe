"""CPU vulnerability mitigations and what they cost a benchmark (pure).

The kernel lists each known CPU vulnerability in /sys/devices/system/cpu/vulnerabilities/ as
``Not affected``, ``Vulnerable…`` or ``Mitigation: <how>`` (kernel docs,
admin-guide/hw-vuln). Most mitigations act on kernel entry and exit or on context switches
(page-table isolation, retpolines, buffer clearing, return thunks, IBPB), so their cost grows
with syscalls per request: a load generator makes more of them than the server it drives, so
it slows more. A few cost almost nothing on this path; they are counted but not flagged.
"""

from __future__ import annotations

from kvperf.server.fact import Fact, unknown

KEY, LABEL = "mitigations", "CPU mitigations"

# Mitigations that do not tax syscalls or context switches: usercopy barriers (spectre_v1),
# opt-in store-bypass disable (prctl/seccomp), KVM-only page splitting (itlb_multihit), PTE
# inversion (l1tf), RDRAND/RDSEED serialisation (srbds).
CHEAP = frozenset({"spectre_v1", "spec_store_bypass", "itlb_multihit", "l1tf", "srbds"})
# Vulnerable by the kernel's wording, yet a costly mitigation is in place: SRSO's
# "Vulnerable: Safe RET, no microcode" still runs every return through the safe-RET thunk.
COSTLY_WORDS = ("Safe RET",)


def how(text: str) -> str:
    """The first clause of an entry: 'Mitigation: Retpolines; STIBP: …' → 'Retpolines'."""
    head = text.split(";", 1)[0]
    return head.split(":", 1)[1].strip() if ":" in head else head.strip()


def classify(name: str, text: str) -> str:
    """'costly', 'cheap', 'vulnerable', 'not affected' or 'other' for one sysfs entry."""
    if text.startswith("Not affected"):
        return "not affected"
    if text.startswith("Mitigation"):
        return "cheap" if name in CHEAP else "costly"
    if text.startswith("Vulnerable"):
        return "costly" if any(word in text for word in COSTLY_WORDS) else "vulnerable"
    return "other"


def boot_setting(cmdline: str) -> str | None:
    """The ``mitigations=`` kernel parameter, if given."""
    for word in cmdline.split():
        if word.startswith("mitigations="):
            return word.split("=", 1)[1]
    return None


def mitigations_fact(entries: dict[str, str] | None, cmdline: str) -> Fact:
    """Costly mitigations in force → warn: the load tool pays them more than the server."""
    if entries is None:
        return unknown(KEY, LABEL, "no /sys/devices/system/cpu/vulnerabilities (old kernel or "
                                   "not Linux)")
    kinds = {name: classify(name, text) for name, text in sorted(entries.items())}
    costly = {name: how(entries[name]) for name, kind in kinds.items() if kind == "costly"}
    value = {"costly": costly, "entries": dict(sorted(entries.items())),
             "boot": boot_setting(cmdline)}
    counts = [f"{sum(k == kind for k in kinds.values())} {kind}"
              for kind in ("cheap", "vulnerable", "not affected", "other")
              if kind in kinds.values()]
    if not costly:
        return Fact(KEY, LABEL, value, ", ".join(counts) or "none listed", "ok")
    shown = "; ".join(f"{name} ({way})" for name, way in costly.items())
    return Fact(KEY, LABEL, value, f"costly: {shown}; " + ", ".join(counts), "warn",
                "they tax every syscall and context switch, and a load tool makes more of "
                "those per request than the server, so the client slows more (watch "
                "client_saturated); compare only runs under the same kernel and boot flags; "
                "a dedicated benchmark host may boot with mitigations=off")
