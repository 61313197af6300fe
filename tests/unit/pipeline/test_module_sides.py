"""--module-repo's request (every check before any build) and the sides' plumbing: side
names, rounds of scenario works with their own run numbers and server per round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.module_sides import module_sides_request
from kvperf.pipeline.module_sides import SideBatch, side_names
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.module_sides import ModuleSidesFlags
from kvperf.pipeline.run.modules import ModuleOptions, prepare_modules

CONFIG = {"seed": 1, "test_groups": [{"group": 1, "scenarios": [
    {"id": "set", "type": "write", "command": "SET __key__ __data__", "keyspacelen": 10,
     "duration": 1},
    {"id": "get", "type": "read", "command": "GET __key__", "keyspacelen": 10,
     "duration": 1}]}]}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(CONFIG))
    return path


def _flags(config: Path | None, tmp_path: Path, **kw: object) -> ModuleSidesFlags:
    base: dict[str, object] = {"kind": "compare", "refs": ("a", "b"), "repo": "R",
                               "module_config": config,
                               "store": StoreFlags(results_dir=tmp_path / "results",
                                                   no_db=True)}
    return ModuleSidesFlags(**{**base, **kw})  # type: ignore[arg-type]


def test_the_request_is_checked_before_any_build(config: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs --module-config"):
        module_sides_request(_flags(None, tmp_path))
    with pytest.raises(UsageError, match="needs two module refs"):
        module_sides_request(_flags(config, tmp_path, refs=("a",)))
    with pytest.raises(UsageError, match="needs module refs"):
        module_sides_request(_flags(config, tmp_path, kind="commits", refs=()))
    with pytest.raises(UsageError, match="--server-bin or --server-ref"):
        module_sides_request(_flags(config, tmp_path, server_bin="x", server_ref="base"))
    with pytest.raises(UsageError, match="no built valkey-server"):
        module_sides_request(_flags(config, tmp_path, valkey_path=tmp_path))
    asked = module_sides_request(_flags(config, tmp_path, label="ab", runs=3))
    assert asked.runs == 3 and asked.out_dir == tmp_path / "results" / "ab"
    assert asked.source.repo == "R" and asked.server_build is None
    assert module_sides_request(_flags(config, tmp_path, kind="commits")).runs == 1


def test_side_names() -> None:
    assert side_names(["base", "slow"]) == ["A", "B"]
    assert side_names(["base", "x/y", "base"]) == ["base", "x_y", "base-2"]


def test_a_side_runs_its_scenarios_in_rounds(config: Path, tmp_path: Path) -> None:
    from kvperf.config.scenarios import load_module_config, select

    loaded = load_module_config(config)
    run = prepare_modules(ModuleOptions(loaded, select(loaded, (), ()), tmp_path, "A"))
    batch = SideBatch(run, 3, None)
    works = batch.works()
    assert [(w.scenario.id, w.round) for w in works] == [
        ("set", 1), ("get", 1), ("set", 2), ("get", 2), ("set", 3), ("get", 3)]
    assert len({w.shared_server for w in works}) == 3  # a fresh server per round
    assert len({w.identity for w in works}) == 2  # the same trials, paired by run
    assert batch.blocked is None
    assert SideBatch(run, 1, "error[E0425]").blocked == "error[E0425]"
