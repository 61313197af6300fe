"""Servers and profilers found on this machine, judged for benchmarking (pure: text in, Fact out).

The probing (``--version`` runs, reading binaries) lives in ``server/machine_probe.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kvperf.server.binary import parse_server_version
from kvperf.server.fact import Fact, missing

TLS_SYMBOL = b"SSL_CTX_new"  # named in the dynamic symbols when OpenSSL is linked


@dataclass(frozen=True)
class ServerFound:
    """A server binary, its ``--version`` text and whether it links OpenSSL."""

    path: Path
    version_text: str
    tls: bool
    default: bool  # what `kvperf run` uses without --server-bin


def links_tls(blob: bytes) -> bool:
    """Whether an executable's bytes name OpenSSL's SSL_CTX_new (built with TLS)."""
    return TLS_SYMBOL in blob


def server_build(text: str) -> dict[str, str]:
    """malloc, bits and build id from 'Valkey server v=8.0.1 sha=… malloc=jemalloc-5.3.0 …'."""
    return dict(re.findall(r"\b(malloc|bits|build)=(\S+)", text))


def server_fact(key: str, label: str, found: ServerFound | None, install: str) -> Fact:
    """One server binary: version and capabilities (TLS, allocator), or how to get it."""
    if found is None:
        return missing(key, label, install)
    parsed = parse_server_version(found.version_text)
    if parsed is None:
        first = (found.version_text.strip().splitlines() or ["no output"])[0]
        return Fact(key, label, {"path": str(found.path)}, f"unrecognised: {first[:60]}",
                    "warn", f"{found.path} --version is not a Valkey/Redis server's")
    build = server_build(found.version_text)
    value = {"path": str(found.path), "product": parsed[0], "version": parsed[1],
             "tls": found.tls, "malloc": build.get("malloc"), "default": found.default}
    caps = ["TLS" if found.tls else "no TLS", f"malloc={build.get('malloc', '?')}"]
    text = (f"{parsed[0]} {parsed[1]} ({', '.join(caps)}){' [default]' if found.default else ''}"
            f" {found.path}")
    hint = "" if found.tls else "tls_mode needs a server built with TLS (e.g. valkey-server)"
    return Fact(key, label, value, text, "ok", hint)


def version_number(text: str) -> str | None:
    """'6.1.192' from 'perf version 6.1.192', '3.19.0' from 'valgrind-3.19.0'."""
    match = re.search(r"(\d+\.\d+(?:\.\d+)*)", text)
    return match.group(1) if match else None


def perf_fact(version_text: str | None, paranoid: str | None, root: bool) -> Fact:
    """perf: installed, and allowed to attach to the servers kvperf starts."""
    if version_text is None:
        return missing("perf", "perf", "install Debian package 'linux-perf' for "
                                       "--measure perf-instructions and profiles")
    level = int(paranoid) if paranoid and paranoid.strip().lstrip("-").isdigit() else None
    value = {"version": version_number(version_text), "perf_event_paranoid": level,
             "root": root}
    text = f"{value['version']} (perf_event_paranoid={level if level is not None else '?'})"
    if not root and level is not None and level > 2:
        return Fact("perf", "perf", value, text, "warn",
                    "unprivileged users cannot count events here: `sysctl "
                    "kernel.perf_event_paranoid=2` (or run as root)")
    return Fact("perf", "perf", value, text, "ok")


def counters_fact(perf_found: bool, unsupported: str | None) -> Fact:
    """Hardware performance counters (``perf stat -e instructions``)."""
    label = "Hardware counters"
    if not perf_found:
        return missing("hardware_counters", label, "perf is needed to check them "
                                                   "(Debian package 'linux-perf')")
    if unsupported:
        return Fact("hardware_counters", label, False, "not exposed", "warn", unsupported)
    return Fact("hardware_counters", label, True, "instructions counted", "ok")


def valgrind_fact(version_text: str | None, missing_tools: str | None) -> Fact:
    """valgrind with callgrind_control: instruction counts where hardware counters are hidden."""
    if version_text is None:
        return missing("valgrind", "valgrind", "install Debian package 'valgrind' for "
                                               "--measure instructions (callgrind)")
    version = version_number(version_text)
    value = {"version": version, "callgrind_control": missing_tools is None}
    if missing_tools:
        return Fact("valgrind", "valgrind", value, f"{version} (no callgrind_control)", "warn",
                    missing_tools)
    return Fact("valgrind", "valgrind", value, f"{version} (callgrind, callgrind_control)", "ok")
