"""--measure memory's unit for a module scenario (pipeline/run/module_memory.py, pure)."""

from __future__ import annotations

from kvperf.config.scenarios import Scenario, ScenarioType
from kvperf.pipeline.run.module_memory import (
    CALL,
    CAPACITY,
    DOCUMENT,
    KEY,
    MemoryUnit,
    memory_unit,
    reserved,
)


def _unread(key: str) -> int | None:
    return None


def test_reserved_reads_the_capacity_of_a_literal_bf_reserve() -> None:
    assert reserved("BF.RESERVE bf:main 0.01 100000") == ("bf:main", 100000)
    assert reserved("bf.reserve 'a b' 0.01 7 EXPANSION 2") == ("a b", 7)
    assert reserved("BF.RESERVE bf:x 0.01 __field:cap__") is None
    assert reserved("BF.ADD bf:main 0.01 3") is None
    assert reserved("BF.RESERVE bf:main") is None


def test_a_bf_reserve_command_counts_its_capacity_per_call() -> None:
    s = Scenario("r", ScenarioType.INGESTION, "BF.RESERVE bf:__field:id__ 0.01 1000",
                 dataset="items.csv")
    assert memory_unit(s, 5000, 5000, 5000, _unread) == MemoryUnit(CAPACITY, 5_000_000)


def test_filters_reserved_in_setup_count_their_capacity_as_bf_info_reads_it() -> None:
    s = Scenario("add", ScenarioType.WRITE, "BF.ADD bf:main __field:item__",
                 setup_commands=("SET x 1", "BF.RESERVE bf:main 0.01 100000",
                                 "BF.RESERVE bf:two 0.01 10"), dataset="items.csv")
    grown = {"bf:main": 300000}  # scaled out twice; bf:two unreadable: its reserved capacity
    assert memory_unit(s, 9, None, 2, grown.get) == MemoryUnit(CAPACITY, 300010)


def test_an_ingestion_counts_documents_anything_else_keys() -> None:
    ingest = Scenario("set", ScenarioType.INGESTION, "JSON.SET doc:__field:id__ $ x",
                      dataset="docs.csv")
    assert memory_unit(ingest, 5000, 5000, 4990, _unread) == MemoryUnit(DOCUMENT, 5000)
    read = Scenario("get", ScenarioType.READ, "JSON.GET doc:__field:id__",
                    dataset="docs.csv")
    assert memory_unit(read, 100, None, 0, _unread) == MemoryUnit(KEY, 0)
    assert memory_unit(read, 100, None, -3, _unread) == MemoryUnit(KEY, 0)


def test_a_write_that_adds_no_key_counts_its_calls() -> None:
    grow = Scenario("append", ScenarioType.WRITE, "JSON.ARRAPPEND doc:__field:id__ $.a 1",
                    dataset="docs.csv")
    assert memory_unit(grow, 700, None, 0, _unread) == MemoryUnit(CALL, 700)
    assert memory_unit(grow, 700, None, 5, _unread) == MemoryUnit(KEY, 5)


def test_instruction_counting_fixes_a_timed_scenarios_request_count() -> None:
    from kvperf.pipeline.run.instructions import INSTRUCTION_REQUESTS, counted_scenario
    timed = Scenario("add", ScenarioType.WRITE, "BF.ADD k x", duration=2, warmup=1)
    assert counted_scenario(timed) == Scenario("add", ScenarioType.WRITE, "BF.ADD k x",
                                               requests=INSTRUCTION_REQUESTS)
    given = Scenario("add", ScenarioType.WRITE, "BF.ADD k x", duration=2, requests=300)
    assert counted_scenario(given).requests == 300 and counted_scenario(given).duration is None
    rows = Scenario("set", ScenarioType.INGESTION, "SET k v", dataset="d.csv", warmup=1)
    assert counted_scenario(rows) == Scenario("set", ScenarioType.INGESTION, "SET k v",
                                              dataset="d.csv")


def test_module_scenarios_refuse_hardware_instruction_counts() -> None:
    import pytest

    from kvperf.core.errors import UsageError
    from kvperf.core.kinds import Measure
    from kvperf.pipeline.commands.checks import refuse_module_measure
    for measure in (Measure.TIMING, Measure.MEMORY, Measure.INSTRUCTIONS):
        refuse_module_measure(measure)
    with pytest.raises(UsageError, match="perf-instructions does not apply to module"):
        refuse_module_measure(Measure.PERF_INSTRUCTIONS)
