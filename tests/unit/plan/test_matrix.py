"""The plan is a pure function: counts, order and stable ids, without any server."""

from __future__ import annotations

import pytest

from kvperf.config.loader import parse_config
from kvperf.plan.matrix import expand


def specs(*objects: dict[str, object]):  # type: ignore[no-untyped-def]
    return parse_config(list(objects), {0, 1})


def test_lists_inside_an_object_are_crossed_objects_are_not() -> None:
    plan = expand(specs(
        {"requests": 10, "commands": ["SET", "GET"], "pipelines": [1, 16], "data_sizes": [3, 64]},
        {"requests": 10, "commands": ["LPUSH"], "cluster_mode": ["no", "yes"]},
    ))
    assert len(plan) == 2 * 2 * 2 + 2
    assert [t.spec_index for t in plan].count(1) == 2
    assert [t.index for t in plan] == list(range(10))


def test_runs_are_round_major() -> None:
    plan = expand(specs({"requests": 10, "commands": ["SET", "GET"]}), runs=3)
    assert [(t.run, t.load.command.name) for t in plan] == [
        (1, "SET"), (1, "GET"), (2, "SET"), (2, "GET"), (3, "SET"), (3, "GET")]


def test_ids_are_stable_and_ignore_the_run() -> None:
    a = expand(specs({"requests": 10, "commands": ["SET", "GET"]}), runs=2)
    b = expand(specs({"requests": 10, "commands": ["SET", "GET"]}), runs=2)
    assert [t.id for t in a] == [t.id for t in b]
    assert a[0].id == a[2].id and a[0].id != a[1].id
    c = expand(specs({"requests": 11, "commands": ["SET", "GET"]}))
    assert c[0].id != a[0].id


def test_duration_bounds_and_params() -> None:
    (trial,) = expand(specs({"duration": 5, "commands": ["SET"], "io-threads": 2}))
    assert trial.load.duration == 5 and trial.load.requests is None
    params = trial.params()
    assert params["io_threads"] == 2 and params["duration"] == 5 and "run" not in params


def test_runs_must_be_positive() -> None:
    with pytest.raises(ValueError):
        expand(specs({"requests": 10, "commands": ["SET"]}), runs=0)


def test_replica_reads_are_crossed_and_only_then_in_the_identity() -> None:
    plain = expand(specs({"requests": 10, "commands": ["GET"]}))[0]
    assert "replicas" not in plain.params() and "read_from_replicas" not in plain.params()
    plan = expand(specs({"requests": 10, "commands": ["GET"], "replicas": 2,
                         "read_from_replicas": ["no", "yes"]}))
    assert [(t.server.replicas, t.load.read_from_replicas) for t in plan] == [
        (2, "no"), (2, "yes")]
    assert plan[1].params()["read_from_replicas"] == "yes" and plan[0].id != plan[1].id
    assert plan[0].params()["replicas"] == 2 and plan[0].id != plain.id
    assert "reads from replicas: yes" in plan[1].describe()
