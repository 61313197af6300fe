"""A definition's resources.requests against the machine: quantities, what a test needs,
the memory refusal, the CPU note, and plans refused or planned by them (pure)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvperf.definitions.dryrun import render_result
from kvperf.definitions.model import DbConfig, Definition, Resources, ToolConfig
from kvperf.definitions.plan import Plan, Refusal, plan_one
from kvperf.definitions.resources import (
    GIB,
    Machine,
    Needs,
    cpu_count,
    cpu_note,
    gib,
    memory_bytes,
    misfit,
    needs,
)
from kvperf.definitions.topology import BUILTIN

MIB = 1 << 20
THIS = Machine(memory=24684096 * 1024, cpus=2)  # this machine's MemTotal, 2 CPUs


@pytest.mark.parametrize(("text", "expected"), [
    ("32g", 32 * GIB), ("32gb", 32 * GIB), ("32GB", 32 * GIB), ("32Gi", 32 * GIB),
    ("32G", 32 * 10**9), ("512mb", 512 * MIB), ("512m", 512 * MIB), ("512Mi", 512 * MIB),
    ("500M", 500 * 10**6), ("1.5g", 3 * GIB // 2), ("1048576", MIB), (" 2g ", 2 * GIB),
    ("64k", 64 * 1024), ("1Ti", 1024 * GIB),
])
def test_memory_quantities(text: str, expected: int) -> None:
    assert memory_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "g", "32x", "32 GiB", "-1g", "lots"])
def test_a_memory_quantity_that_is_none_is_named(text: str) -> None:
    with pytest.raises(ValueError, match=f"memory {text!r} is not a quantity"):
        memory_bytes(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("4", 4.0), ("0.5", 0.5), ("500m", 0.5), ("1500m", 1.5), ("13", 13.0)])
def test_cpu_quantities(text: str, expected: float) -> None:
    assert cpu_count(text) == expected


@pytest.mark.parametrize("text", ["4g", "two", "", "1Ki"])
def test_a_cpu_count_that_is_none_is_named(text: str) -> None:
    with pytest.raises(ValueError, match=f"cpus {text!r} is not a CPU count"):
        cpu_count(text)


def test_gib_in_messages() -> None:
    assert (gib(32 * GIB), gib(THIS.memory), gib(GIB // 2)) == ("32 GiB", "23.5 GiB",
                                                                "0.5 GiB")


def test_needs_sum_the_server_copies_and_the_larger_of_clients_or_preload() -> None:
    topology = Resources("1", "10g")
    asked = needs(Resources(None, "32g"), topology, 2,
                  [("memtier_benchmark", Resources("8", "2g")),
                   ("memtier_benchmark", Resources("500m", "1g"))],
                  [("memtier_benchmark", Resources(None, "2g"))])
    assert asked.memory == (("2 servers", 64 * GIB), ("memtier_benchmark", 2 * GIB),
                            ("memtier_benchmark", GIB))
    assert asked.cpus == (("server", 1.0), ("memtier_benchmark", 8.0),
                          ("memtier_benchmark", 0.5))
    assert asked.memory_total == 67 * GIB and asked.cpus_total == 9.5
    preload_heavy = needs(None, None, 1, [("c", Resources(None, "1g"))],
                          [("memtier_benchmark", Resources(None, "4g"))])
    assert preload_heavy.memory == (("preload memtier_benchmark", 4 * GIB),)


def test_a_topology_memory_default_is_no_need() -> None:
    """The corpus' 10g per server (whatever the dataset) is a container default."""
    asked = needs(None, Resources("3", "30g"), 1, [("memtier_benchmark", Resources("4", "2g"))])
    assert asked.memory == (("memtier_benchmark", 2 * GIB),)
    assert asked.cpus == (("server", 3.0), ("memtier_benchmark", 4.0))


def test_memory_that_does_not_fit_is_refused_with_the_figures() -> None:
    asked = Needs(memory=(("server", 32 * GIB), ("memtier_benchmark", 2 * GIB)))
    assert misfit(asked, THIS) == (
        "needs 34 GiB of memory (server 32 GiB, memtier_benchmark 2 GiB), this machine has "
        "23.5 GiB; --ignore-resources runs it anyway")
    assert misfit(Needs(memory=(("server", 32 * GIB),)), THIS) == (
        "needs 32 GiB of memory (server), this machine has 23.5 GiB; --ignore-resources runs "
        "it anyway")
    assert misfit(Needs(memory=(("server", THIS.memory),)), THIS) is None  # exactly fits
    assert misfit(Needs(memory=(("server", THIS.memory + 1),)), THIS) is not None
    assert misfit(Needs(), Machine(0, 1)) is None  # nothing asked


def test_cpus_beyond_the_machine_are_a_note_not_a_refusal() -> None:
    asked = Needs(cpus=(("server", 1.0), ("memtier_benchmark", 4.0)))
    assert cpu_note(asked, THIS) == ("asks 5 CPUs (server 1, memtier_benchmark 4), this "
                                     "machine has 2 CPUs: server and clients share them")
    assert cpu_note(asked, Machine(THIS.memory, 5)) is None
    assert misfit(asked, Machine(0, 1)) is None


CLIENT = ToolConfig("memtier_benchmark", "--command 'GET __key__' --test-time 60 -c 2 -t 1",
                    resources=Resources("8", "2g"))


def _definition(memory: str | None) -> Definition:
    return Definition(name="big", source=Path("/defs/big.yml"), topologies=("oss-standalone",),
                      dbconfig=DbConfig(resources=Resources(None, memory) if memory else None),
                      clients=(CLIENT,))


def test_a_plan_that_does_not_fit_is_refused_and_ignore_resources_plans_it() -> None:
    refused = plan_one(_definition("32g"), "oss-standalone", BUILTIN, None, machine=THIS)
    assert isinstance(refused, Refusal)
    assert refused.reason.startswith("needs 34 GiB of memory (server 32 GiB, "
                                     "memtier_benchmark 2 GiB), this machine has 23.5 GiB")
    assert "needs 34 GiB of memory" in str(render_result(refused))
    ignored = plan_one(_definition("32g"), "oss-standalone", BUILTIN, None, machine=None)
    assert isinstance(ignored, Plan)
    assert any(n.startswith("resources not checked (--ignore-resources): server memory 32g")
               for n in ignored.notes), ignored.notes
    fits = plan_one(_definition("8g"), "oss-standalone", BUILTIN, None, machine=THIS)
    assert isinstance(fits, Plan)
    assert "asks 9 CPUs (server 1, memtier_benchmark 8), this machine has 2 CPUs: server and " \
           "clients share them" in fits.notes


def test_a_bad_quantity_refuses_unless_resources_are_ignored() -> None:
    bad = replace(_definition(None), dbconfig=DbConfig(resources=Resources(None, "lots")))
    refused = plan_one(bad, "oss-standalone", BUILTIN, None, machine=THIS)
    assert isinstance(refused, Refusal)
    assert refused.reason == ("resources: memory 'lots' is not a quantity (e.g. 512m, 32g, "
                              "32Gi, 500M)")
    assert isinstance(plan_one(bad, "oss-standalone", BUILTIN, None, machine=None), Plan)
