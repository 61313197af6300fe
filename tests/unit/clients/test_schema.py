"""The contract's JSON Schemas (src/kvperf/clients/schema/) against examples: docs/CLIENTS.md's
own examples validate, the spec kvperf writes validates, and each kind of mistake is named."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from kvperf.clients import schema
from kvperf.clients.workload import workload
from kvperf.config.commands import resolve_command
from kvperf.core.kinds import Concurrency
from kvperf.plan.trial import Load, ServerSetup, Trial
from kvperf.server.resp import Endpoint
from tests.helpers import ROOT

DOC = ROOT / "docs" / "CLIENTS.md"


def _doc_examples() -> dict[str, dict[str, Any]]:
    """The fenced JSON blocks of docs/CLIENTS.md by their ``format`` (the manifest by
    ``manifest``)."""
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    found = {}
    for block in blocks:
        document = json.loads(block)
        found[document.get("format", "manifest")] = document
    return found


def trial(command: str = "SET", pipeline: int = 1, clients: int = 1) -> Trial:
    server = ServerSetup(False, False, None, 1, None, (), (), ())
    load = Load(resolve_command(command), 100, pipeline, clients, 1000, None, 5, 1, None,
                None)
    return Trial(0, 1, 1, server, load)


def test_the_documented_examples_validate() -> None:
    examples = _doc_examples()
    assert set(examples) == {"manifest", "kvperf-client-workload", "kvperf-client-result"}
    assert schema.problems(examples["kvperf-client-workload"], schema.WORKLOAD) == []
    assert schema.problems(examples["kvperf-client-result"], schema.RESULT) == []


def test_the_spec_kvperf_writes_validates() -> None:
    for command, pipeline, model in (("SET", 1, Concurrency.SINGLE),
                                     ("MIX_READ_HEAVY", 16, Concurrency.POOL),
                                     ("MULTI_EXEC_5", 1, Concurrency.ASYNC),
                                     ("INCR", 1, Concurrency.SINGLE)):
        spec = workload(trial(command, pipeline), model, Endpoint("127.0.0.1", 6379))
        assert schema.problems(spec, schema.WORKLOAD) == [], (command, spec)


@pytest.mark.parametrize(("path", "value", "message"), [
    (("version",), 2, "1 was expected"),
    (("commands", "SET", "ops"), -1, "less than the minimum"),
    (("commands", "SET", "histogram"), "not base64!", "does not match"),
    (("commands", "DEL"), {"ops": 1, "errors": 0, "histogram": "AA=="}, "'DEL' is not one of"),
    (("allocations",), {"per_op": 1}, "is not valid under any of the given schemas"),
    (("client", "runtime"), "", "should be non-empty"),
])
def test_a_bad_result_is_named_by_its_path(path: tuple[str, ...], value: object,
                                           message: str) -> None:
    document = copy.deepcopy(_doc_examples()["kvperf-client-result"])
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    found = schema.problems(document, schema.RESULT)
    assert found and message in " ".join(found), found
    assert found[0].startswith("at $." + path[0]), found


def test_a_spec_with_both_bounds_or_neither_is_invalid() -> None:
    spec = copy.deepcopy(_doc_examples()["kvperf-client-workload"])
    spec["requests"] = 1000
    assert schema.problems(spec, schema.WORKLOAD)
    spec["requests"] = spec["duration_s"] = None
    assert schema.problems(spec, schema.WORKLOAD)
