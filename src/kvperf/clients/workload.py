"""The workload spec (``kvperf-client-workload`` v1) a harness gets, made from a config
trial's load (pure), and what the contract cannot express, refused naming the config key.

Config → spec: ``commands`` SET, GET, INCR, a SET:GET mix (MIX_READ_HEAVY, ``SET:GET 1:10``
…) as ratios, MULTI_EXEC_N as a transaction of N SETs (batches of N, ``transaction``);
``data_sizes`` → value_size; ``pipelines`` → pipeline; ``clients`` → workers;
``keyspacelen`` → keys.count; ``requests`` or ``duration``; ``warmup``; the concurrency model;
``allocation_ops``: the untimed allocation pass after the measured window (``allocation_ops``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from kvperf.config.commands import CommandSpec
from kvperf.core.jsontypes import JsonObject
from kvperf.core.kinds import Concurrency as Model
from kvperf.plan.trial import Trial
from kvperf.server.resp import Endpoint

KEY_PREFIX = "key:"
INCR_PREFIX = "incr:"  # INCR's keys: <prefix>incr:<i>
VOCABULARY = ("SET", "GET", "INCR")
SEED = 1
DEADLINE_GRACE = 60.0  # seconds past warmup + measured time before a harness is killed
GRACE_ENV = "KVPERF_CLIENT_GRACE"  # another grace in seconds (the hang test's: 2)
MIN_ESTIMATED_RPS = 2000.0  # a requests bound's time estimate, for its deadline
ALLOCATION_OPS = 1000  # the untimed allocation pass's operations (at least)
ALLOCATION_BATCHES = 4  # … and at least this many batches per worker


def default_model(clients: int) -> Model:
    """single for one client, a pool of ``clients`` workers otherwise."""
    return Model.SINGLE if clients == 1 else Model.POOL


@dataclass(frozen=True)
class Shape:
    """What the harness sends: commands with ratios, batch size, MULTI/EXEC."""

    commands: tuple[tuple[str, int], ...]
    pipeline: int
    transaction: bool


def shape(command: CommandSpec, pipeline: int) -> Shape | str:
    """The spec's commands for a config command, or why the contract cannot say it
    (naming the config key ``commands``)."""
    name = command.name
    if name in VOCABULARY:
        return Shape(((name, 1),), pipeline, False)
    calls = command.calls_per_sequence
    transaction = re.fullmatch(r"MULTI_EXEC_(\d+)", name)
    if transaction:
        if pipeline != 1:
            return (f"pipelines {pipeline} with commands {name}: a client harness sends a "
                    f"transaction as one batch of its {transaction.group(1)} SETs "
                    "(use pipelines [1])")
        return Shape((("SET", 1),), int(transaction.group(1)), True)
    if command.independent_keys and set(calls) <= {"set", "get"}:
        return Shape(tuple((c.upper(), n) for c, n in sorted(calls.items(), reverse=True)),
                     pipeline, False)
    return (f"commands {name!r}: a client harness speaks SET, GET, INCR, SET:GET mixes "
            "(MIX_*, \"SET:GET a:b\") and MULTI_EXEC_N")


def unsupported(trial: Trial, model: Model) -> str | None:
    """Why a trial cannot run on a client harness, naming the config key (or flag); None
    when it can."""
    load, server = trial.load, trial.server
    problems = [
        (server.cluster_mode, "cluster_mode yes: client harnesses speak to one standalone "
                              "server"),
        (bool(server.modules), "modules: client harnesses run SET/GET/INCR only"),
        (load.staircase is not None, "staircase: client harnesses keep their clients "
                                     "for the whole trial (use --tool kvload)"),
        (bool(load.workload()), f"{', '.join(load.workload())}: client harnesses draw "
                                "uniform keys and fixed values (use --tool kvload)"),
        (load.threads is not None, "threads: a client harness has no load-generator "
                                   "threads (its workers are clients)"),
        (model == Model.SINGLE and load.clients != 1,
         f"clients {load.clients} with concurrency single: one connection is one client "
         "(use clients [1], or concurrency pool/async)"),
    ]
    for failed, text in problems:
        if failed:
            return text
    found = shape(load.command, load.pipeline)
    return found if isinstance(found, str) else None


def workload(trial: Trial, model: Model, endpoint: Endpoint, ca_file: str | None = None,
             noop: bool = False, seed: int = SEED) -> JsonObject:
    """The spec document for one trial (``unsupported`` must have been None)."""
    load = trial.load
    found = shape(load.command, load.pipeline)
    assert not isinstance(found, str), found
    return {
        "format": "kvperf-client-workload", "version": 1,
        "endpoint": {"host": endpoint.host, "port": endpoint.port,
                     "tls": trial.server.tls, "ca_file": ca_file, "cert_file": None,
                     "key_file": None},
        "commands": [{"command": c, "ratio": r} for c, r in found.commands],
        "keys": {"prefix": KEY_PREFIX, "count": load.keyspacelen, "pattern": "random"},
        "value_size": load.data_size,
        "pipeline": found.pipeline,
        "transaction": found.transaction,
        "concurrency": {"model": model.value, "workers": load.clients},
        "requests": load.requests,
        "duration_s": None if load.requests else load.duration,
        "warmup_s": load.warmup,
        "seed": seed,
        "noop": noop,
        "allocation_ops": allocation_ops(found.pipeline, load.clients),
        **({"rate": {"rps": load.rps, "arrivals": load.arrivals or "poisson"}}
           if load.rps else {}),
    }


def allocation_ops(pipeline: int, workers: int) -> int:
    """Operations of the allocation pass a harness runs after its measured window (issue 37):
    ALLOCATION_OPS, or ALLOCATION_BATCHES batches per worker when that is more."""
    return max(ALLOCATION_OPS, ALLOCATION_BATCHES * pipeline * workers)


def deadline(spec: JsonObject) -> float:
    """Seconds a harness may run: warmup + duration (or a requests bound's estimate at
    MIN_ESTIMATED_RPS) + the allocation pass's estimate + DEADLINE_GRACE
    (``$KVPERF_CLIENT_GRACE``)."""
    passed = spec.get("allocation_ops")
    warmup = float(spec["warmup_s"]) + (
        float(passed) / MIN_ESTIMATED_RPS if isinstance(passed, int) else 0.0)
    duration = spec.get("duration_s")
    requests = spec.get("requests")
    measured = (float(duration) if isinstance(duration, int | float)
                else float(requests) / MIN_ESTIMATED_RPS if isinstance(requests, int)
                else 0.0)
    return warmup + measured + float(os.environ.get(GRACE_ENV, DEADLINE_GRACE))


def seeded_keys(spec: JsonObject) -> bool:
    """Whether the spec reads keys kvperf must preload (a GET among its commands)."""
    commands = spec["commands"]
    assert isinstance(commands, list)
    return any(isinstance(c, dict) and c.get("command") == "GET" for c in commands)
