"""check_measure: what instruction mode does to the plan, and what it refuses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvperf.config.loader import default_config_path, load_config
from kvperf.core.errors import UsageError
from kvperf.driver.base import Capabilities
from kvperf.driver.benchmark_tool import BenchmarkTool
from kvperf.driver.kvload import Kvload
from kvperf.pipeline.run.instructions import check_measure

KVLOAD = Kvload(Path("kvload"), "0.1.0")


def _default_specs() -> list:  # type: ignore[type-arg]
    return load_config(default_config_path(), {0, 1})


def test_builtin_config_gets_a_fixed_request_count_and_one_client() -> None:
    specs = check_measure("instructions", _default_specs(), KVLOAD, own_config=False,
                          client_mode=False)
    assert all(s.requests == (20000,) and s.duration is None and s.clients == (1,)
               for s in specs)


def test_timing_mode_leaves_the_plan_alone() -> None:
    specs = _default_specs()
    assert check_measure("timing", specs, KVLOAD, own_config=False, client_mode=False) == specs


def test_own_config_keeps_its_requests() -> None:
    specs = [replace(s, duration=None, requests=(1000,)) for s in _default_specs()]
    assert check_measure("instructions", specs, KVLOAD, own_config=True,
                         client_mode=False) == specs


def test_a_tool_without_seed_is_refused() -> None:
    tool = BenchmarkTool("redis-benchmark", Path("rb"), "7.0.15", Capabilities(seed=False))
    with pytest.raises(UsageError, match=r"redis-benchmark 7\.0\.15 cannot fix its random key"):
        check_measure("instructions", _default_specs(), tool, own_config=False,
                      client_mode=False)
