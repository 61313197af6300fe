"""kvload's measure argv for a trial with faults (driver/kvload.failover_argv): reconnecting,
the replicas as fallbacks, and for the built-in SET unique keys with an ack log."""

from __future__ import annotations

from pathlib import Path

from kvperf.config.commands import resolve_command
from kvperf.config.faults import Fault
from kvperf.driver.base import Target
from kvperf.driver.kvload import ACK_PREFIX, Kvload, checks_writes, failover_argv
from kvperf.plan.trial import Load
from kvperf.server.resp import Endpoint

KILL = (Fault(1.0, "kill", "primary"),)
TARGET = Target((Endpoint("127.0.0.1", 7001),), False,
                replicas=(Endpoint("127.0.0.1", 7002), Endpoint("127.0.0.1", 7003)))


def _load(command: str, faults: tuple[Fault, ...] = KILL) -> Load:
    return Load(resolve_command(command), 64, 1, 4, 1000, None, 4, 0, None, None,
                faults=faults)


def _argv(load: Load) -> list[str]:
    base = Kvload(Path("kvload"), "0.1").argv(load, TARGET, ["--duration", "4"],
                                              Path("r.json"))
    return failover_argv(base, load, TARGET, Path("acks.txt"))


def test_a_set_writes_unique_keys_and_logs_each_acknowledged_one() -> None:
    argv = _argv(_load("SET"))
    assert argv[:4] == ["kvload", "--reconnect-on-error", "--fallback",
                        "127.0.0.1:7002,127.0.0.1:7003"]
    assert argv[argv.index("-r") + 1] == "1000000000" and "--sequential" in argv
    assert argv[argv.index("--ack-log") + 1] == "acks.txt" and "-t" not in argv
    assert argv[-3:] == ["SET", f"{ACK_PREFIX}__rand_int__", "__data__"]


def test_other_commands_reconnect_without_a_write_check() -> None:
    load = _load("GET")
    argv = _argv(load)
    assert not checks_writes(load) and "--ack-log" not in argv
    assert argv[argv.index("-r") + 1] == "1000" and argv[-2:] == ["-t", "get"]
    assert "--reconnect-on-error" in argv
    assert not checks_writes(_load("SET", faults=()))
