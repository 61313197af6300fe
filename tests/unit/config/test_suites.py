"""Built-in suites (config/suites.py) and the config's ``gates`` key."""

from __future__ import annotations

import pytest

from kvperf.config.loader import parse_config
from kvperf.config.suites import SUITES, SUITES_DIR, load_suites, parse_names, suite_measure
from kvperf.core.errors import ConfigError, UsageError
from kvperf.core.kinds import Measure
from kvperf.plan.matrix import expand

CPUS = {0, 1}


def test_every_suite_file_has_a_line_and_loads() -> None:
    assert {p.stem for p in SUITES_DIR.glob("*.json")} == set(SUITES)
    for name in SUITES:
        specs = load_suites((name,), CPUS)
        assert specs and all(s.server_cpus is None and s.duration for s in specs), name


def test_the_comprehensive_suite_covers_the_issue_matrix() -> None:
    trials = expand(load_suites(("comprehensive",), CPUS), 1)
    loads = [t.load for t in trials]
    assert len(trials) == 27
    sizes = {(ld.data_size, ld.pipeline) for ld in loads if ld.command.name == "SET"}
    assert {(d, p) for d in (100, 1000, 10000) for p in (1, 10, 100)} <= sizes
    names = {ld.command.name for ld in loads}
    assert {"MULTI_EXEC_5", "INCR", "MIX_READ_HEAVY", "MIX_WRITE_HEAVY", "MIX_50_50"} <= names
    assert {ld.clients for ld in loads} == {1, 10, 50}


def test_several_suites_run_in_order_numbered_across() -> None:
    specs = load_suites(parse_names("latency, pipeline,latency"), CPUS)
    assert [s.index for s in specs] == [0, 1]
    assert specs[1].pipelines == (1, 4, 16, 64, 128)


def test_unknown_suites_are_named() -> None:
    with pytest.raises(UsageError, match="--suite 'nope': no such suite; suites: quick"):
        parse_names("quick,nope")
    with pytest.raises(UsageError, match="name a suite"):
        parse_names(" , ")


def test_a_config_object_may_carry_gates() -> None:
    [spec] = parse_config([{"commands": "SET", "duration": 1, "gates": "SET.rps>=1"}], CPUS)
    assert spec.gates == ("SET.rps>=1",)
    with pytest.raises(ConfigError, match="object 0: 'gates' entries must be strings"):
        parse_config([{"commands": "SET", "duration": 1, "gates": [5]}], CPUS)


def test_the_memory_suite_measures_memory_and_runs_alone() -> None:
    assert suite_measure(("memory",), Measure.TIMING) is Measure.MEMORY
    assert suite_measure(("latency", "pipeline"), Measure.TIMING) is Measure.TIMING
    with pytest.raises(UsageError, match="the memory suite runs alone"):
        suite_measure(("memory", "quick"), Measure.TIMING)
    with pytest.raises(UsageError, match="not with --measure instructions"):
        suite_measure(("memory",), Measure.INSTRUCTIONS)
