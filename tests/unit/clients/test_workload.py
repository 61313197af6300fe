"""The config → workload spec mapping and its refusals (clients/workload.py), and the
result's accounting against INFO commandstats (clients/result.py)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from kvperf.clients.result import ResultError, accounting, parse
from kvperf.clients.workload import deadline, unsupported, workload
from kvperf.core.kinds import Concurrency
from kvperf.server.resp import Endpoint
from kvperf.server.stats import CommandStat
from tests.unit.clients.test_schema import _doc_examples, trial


def test_commands_map_to_ratios_batches_and_transactions() -> None:
    end = Endpoint("127.0.0.1", 7000)
    mix = workload(trial("MIX_READ_HEAVY", 4), Concurrency.POOL, end)
    assert mix["commands"] == [{"command": "SET", "ratio": 1}, {"command": "GET", "ratio": 10}]
    assert (mix["pipeline"], mix["transaction"]) == (4, False)
    tx = workload(trial("MULTI_EXEC_5"), Concurrency.SINGLE, end)
    assert tx["commands"] == [{"command": "SET", "ratio": 1}]
    assert (tx["pipeline"], tx["transaction"]) == (5, True)
    assert (tx["duration_s"], tx["requests"], tx["warmup_s"]) == (5, None, 1)
    assert deadline(tx) == 1 + 5 + 1000 / 2000 + 60


@pytest.mark.parametrize(("command", "pipeline", "clients", "model", "key"), [
    ("LPUSH", 1, 1, Concurrency.SINGLE, "commands 'LPUSH'"),
    ("MULTI_EXEC_5", 4, 1, Concurrency.SINGLE, "pipelines 4"),
    ("SET", 1, 8, Concurrency.SINGLE, "clients 8 with concurrency single"),
])
def test_what_the_contract_cannot_say_is_refused_naming_the_key(
        command: str, pipeline: int, clients: int, model: Concurrency, key: str) -> None:
    reason = unsupported(trial(command, pipeline, clients), model)
    assert reason is not None and reason.startswith(key), reason
    cluster = trial()
    cluster = replace(cluster, server=replace(cluster.server, cluster_mode=True))
    assert (unsupported(cluster, Concurrency.SINGLE) or "").startswith("cluster_mode")


def _result(set_ops: int, get_ops: int) -> str:
    document = copy.deepcopy(_doc_examples()["kvperf-client-result"])
    document["commands"]["SET"]["ops"] = set_ops
    document["commands"]["GET"]["ops"] = get_ops
    document["warmup"] = {"SET": 10, "GET": 100}
    document["allocations"] = None
    return json.dumps(document)


SPEC = {"commands": [{"command": "SET", "ratio": 1}, {"command": "GET", "ratio": 10}]}


def test_accounting_passes_within_one_percent_and_names_a_gap_beyond() -> None:
    found = parse(_result(1000, 10000), SPEC)
    stats = {"set": CommandStat(calls=1010), "get": CommandStat(calls=10100 + 100),
             "client|setinfo": CommandStat(calls=2)}
    table, problem = accounting(found, stats)
    assert problem is None and table["get"] == {"reported": 10100, "server": 10200}
    stats["set"] = CommandStat(calls=1064)  # the harness dropped 5% of its SETs
    _, problem = accounting(found, stats)
    assert problem is not None and "1064 SET calls" in problem and "+54 (+5.3%)" in problem


def test_a_result_that_is_not_json_or_not_the_specs_commands_is_refused() -> None:
    with pytest.raises(ResultError, match="not one JSON document"):
        parse("SET 1000\n", SPEC)
    with pytest.raises(ResultError, match="printed nothing"):
        parse("", SPEC)
    with pytest.raises(ResultError, match=r"reported commands \['GET', 'SET'\], the spec "):
        parse(_result(1, 1), {"commands": [{"command": "INCR", "ratio": 1}]})
    with pytest.raises(ResultError, match="schema"):
        parse(json.dumps({"format": "kvperf-client-result"}), SPEC)


def _passed(document: dict[str, Any], ops: int = 1000) -> str:
    document["allocations"] = {"bytes_per_op": 512.0, "ops": ops, "method": "m",
                               "exact": True, "calls": {"SET": 100, "GET": 900}}
    return json.dumps(document)


def test_the_allocation_pass_is_accounted_and_its_ops_are_its_calls() -> None:
    """The untimed allocation pass's calls reach the server: the accounting check counts
    them (the server's SETs without them would be 100 short), and a pass whose ``ops``
    are not its calls is refused — the bytes are divided by them."""
    document = json.loads(_result(1000, 10000))
    found = parse(_passed(document), SPEC)
    assert found.allocations() == {"per_op": 512.0, "unit": "bytes", "method": "m",
                                   "exact": True, "ops": 1000}
    stats = {"set": CommandStat(calls=1010 + 100), "get": CommandStat(calls=10100 + 900)}
    assert accounting(found, stats)[1] is None
    stats["set"] = CommandStat(calls=1010)
    _, problem = accounting(found, stats)
    assert problem is not None and "harness reported 1110" in problem
    with pytest.raises(ResultError, match="the pass reports 999 ops but sent 1000 calls"):
        parse(_passed(document, 999), SPEC)


def test_the_spec_asks_for_an_allocation_pass_and_its_deadline_allows_for_it() -> None:
    end = Endpoint("127.0.0.1", 7000)
    single = workload(trial("SET"), Concurrency.SINGLE, end)
    wide = workload(trial("SET", 100, 50), Concurrency.POOL, end)
    assert (single["allocation_ops"], wide["allocation_ops"]) == (1000, 4 * 100 * 50)
    assert deadline(single) == 1 + 5 + 1000 / 2000 + 60


@pytest.mark.parametrize(("lowest", "highest", "figures"), [
    (1, 3_600_000_000, 3), (1, 60_000_000, 2), (10, 60_000_000, 3)])
def test_a_histogram_of_another_precision_is_refused_naming_the_contract_s(
        lowest: int, highest: int, figures: int) -> None:
    """Every harness records whole µs from 1 to 60 s with 3 significant figures, so one
    library's p99 is read at the same resolution as another's; a harness that records
    otherwise fails its trial."""
    from hdrh.histogram import HdrHistogram

    document = json.loads(_result(1, 1))
    for command in document["commands"].values():
        histogram = HdrHistogram(lowest, highest, figures)
        histogram.record_value(250)
        command["histogram"] = histogram.encode().decode()
    with pytest.raises(ResultError, match=r"precision .* the contract's is"):
        parse(json.dumps(document), SPEC)
    good = HdrHistogram(1, 60_000_000, 3)
    good.record_value(250)
    for command in document["commands"].values():
        command["histogram"] = good.encode().decode()
    assert parse(json.dumps(document), SPEC).ops == 2


def test_an_open_loop_trial_asks_for_its_rate_and_a_harness_must_echo_it() -> None:
    """A trial at a rate (a sweep's fixed-rate point) gives the spec its ``rate``; the
    result must echo it — a harness that ignored it ran closed loop, and its latency would
    be stored as corrected when it is not."""
    from kvperf.clients import schema

    end = Endpoint("127.0.0.1", 7000)
    base = trial("SET")
    paced = replace(base, load=replace(base.load, rps=2000.0, arrivals="uniform"))
    spec = workload(paced, Concurrency.SINGLE, end)
    assert spec["rate"] == {"rps": 2000.0, "arrivals": "uniform"}
    assert schema.problems(spec, schema.WORKLOAD) == []
    assert "rate" not in workload(base, Concurrency.SINGLE, end)
    asked = {**SPEC, "rate": spec["rate"]}
    document = json.loads(_result(10, 100))
    with pytest.raises(ResultError, match="the harness reported None"):
        parse(json.dumps(document), asked)
    document["rate"] = {"rps": 2000, "arrivals": "uniform"}
    assert parse(json.dumps(document), asked).open_loop
    assert not parse(_result(10, 100), SPEC).open_loop


def test_an_open_loop_harness_row_reads_as_corrected_a_closed_one_never(tmp_path: Any) -> None:
    from kvperf.results.row import Row
    from kvperf.store.files import read_histograms

    (tmp_path / "h.json").write_text(json.dumps({"corrected": "A", "service": "B"}))
    closed = Row(histogram_file="h.json", harness={"name": "x"})  # type: ignore[typeddict-item]
    paced = Row(histogram_file="h.json",  # type: ignore[typeddict-item]
                harness={"name": "x", "rate": {"rps": 10, "arrivals": "uniform"}})
    assert read_histograms(tmp_path, closed) == {"service": "B"}
    assert read_histograms(tmp_path, paced) == {"corrected": "A", "service": "B"}
