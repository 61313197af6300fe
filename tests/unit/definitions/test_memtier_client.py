"""memtier argv as kvload memtier reads it, and the clients kvperf would run."""

from __future__ import annotations

import re
import subprocess

import pytest

from kvperf.definitions import memtier, memtier_options
from kvperf.definitions.client import ClientError, plan_client
from kvperf.definitions.memtier import MemtierArgsError, Option, parse, refusal
from kvperf.definitions.model import ToolConfig
from tests.helpers import require_binary


def test_getopt_forms() -> None:
    options = parse('"--data-size" "10" --ratio=1:0 -c50 -t 4 -Rn allkeys --key-pref "" '
                    '--command="SET __key__ __data__" --command-key-pattern P --hide')
    assert options == (
        Option("data-size", "10"), Option("ratio", "1:0"), Option("clients", "50"),
        Option("threads", "4"), Option("random-data"), Option("requests", "allkeys"),
        Option("key-prefix", ""), Option("command", "SET __key__ __data__"),
        Option("command-key-pattern", "P"), Option("hide-histogram"))
    assert memtier.argv(options)[:2] == ("--data-size=10", "--ratio=1:0")
    assert memtier.value(options, "requests") == "allkeys"


@pytest.mark.parametrize(("args", "says"), [
    ("--key-m", "ambiguous"), ("--no-such", "not a memtier option"), ("-Q", "not a memtier"),
    ("--test-time", "requires an argument"), ("-c", "requires an argument"),
    ("--hide-histogram=yes", "doesn't allow an argument"), ("GET x", "stray argument"),
    ('--command "GET', "cannot be split"),
])
def test_argv_errors(args: str, says: str) -> None:
    with pytest.raises(MemtierArgsError, match=says):
        parse(args)


@pytest.mark.parametrize(("args", "cluster", "says"), [
    ("--multi-key-get 5", False, "--multi-key-get is not supported by kvload memtier"),
    ("--reconnect-on-error", False, "reconnecting is not implemented"),
    ("--port 6380", False, "--port is kvperf's to set"),
    ("--json-out-file x.json", False, "--json-out-file is kvperf's"),
    ("--data-size-pattern S", False, "--data-size-pattern=S is not supported"),
    ("--command-ratio 2 --command 'GET __key__'", False, "comes before any --command"),
    ("--test-time 2 -n 100", False, "mutually exclusive"),
    ("--command 'GET __key__' --key-pattern R:R", False, "--key-pattern with --command"),
    ("--command 'GET __key__' --ratio 1:1", False, "use --command-ratio"),
    ("--command 'GET __key__' --scan-incremental-iteration", False, "ZSCAN cursors only"),
    ("--command 'ZSCAN z' --scan-incremental-iteration", False, "'ZSCAN <key> <cursor>'"),
    ("--command 'SCAN 0' --scan-incremental-iteration --pipeline 2", False, "--pipeline 1"),
    ("--command 'SCAN' --scan-incremental-iteration", False, "'SCAN <cursor>'"),
    ("--command 'SCAN 0' --command 'GET __key__' --scan-incremental-iteration", False,
     "exactly one --command"),
    ("--command 'SCAN 0' --scan-incremental-iteration", True, "no cluster"),
    ("--clients-start 2 --test-time 5", False, "must all be specified together"),
    ("--clients-start 2 --clients-step 2 --step-duration 1 -n 9", False, "needs --test-time"),
    ("-c 2 --clients-start 2 --clients-step 1 --step-duration 1 --test-time 5", False,
     "--clients-start (2) must be less than --clients (2)"),
])
def test_refusals_name_the_option(args: str, cluster: bool, says: str) -> None:
    why = refusal(parse(args), cluster)
    assert why is not None and says in why


def test_accepted() -> None:
    assert refusal(parse("--ratio 1:10 --key-pattern R:R --test-time 5"), True) is None
    assert refusal(parse("--command 'GET __key__' --command-key-pattern G"), True) is None
    assert refusal(parse("--ratio 1:0 --key-pattern P:P -n allkeys"), False) is None
    assert refusal(parse("--ratio 1:0 --key-pattern P:P -n allkeys"), True) is None
    assert refusal(parse("--command 'GET __key__' --command-key-pattern S"), True) is None
    assert refusal(parse("--command 'SCAN 0 COUNT 10' --scan-incremental-iteration"),
                   False) is None
    assert refusal(parse("--clients-start 10 --clients-step 10 --step-duration 5 "
                         "--test-time 60"), False) is None
    assert refusal(parse("--command 'ZSCAN z 0 COUNT 10' --scan-incremental-iteration"),
                   False) is None


def test_option_table_matches_kvload_help() -> None:
    """The table kvperf reads from kvload is the one its --help is printed from: the long
    options `kvload memtier --help` lists are the supported ones, but for four it accepts
    without listing them (memtier's --help/--version, and values of --data-size-pattern /
    --command-stats-breakdown that change nothing)."""
    kvload = require_binary("kvload")
    help_text = subprocess.run([kvload, "memtier", "--help"], capture_output=True,
                               text=True, check=True).stdout
    listed = set(re.findall(r"^ +(?:-\S, )?--([a-z][a-z0-9-]+)", help_text, re.MULTILINE))
    unlisted = {"help", "version", "data-size-pattern", "command-stats-breakdown"}
    supported = {spec.name for spec in memtier_options.table().options if not spec.refused}
    assert listed == supported - unlisted


def test_override_replaces_test_time_only() -> None:
    timed = plan_client(ToolConfig("memtier_benchmark", "--test-time 180 -c 5"), False, 2)
    counted = plan_client(ToolConfig("memtier_benchmark", "-n 1000 -c 5"), False, 2)
    assert (timed.test_time, timed.test_time_overridden) == (2, True)
    assert "--test-time=2" in timed.argv and timed.runner == "kvload memtier"
    assert (counted.test_time, counted.requests, counted.test_time_overridden) == (
        None, "1000", False)
    kept = plan_client(ToolConfig("memtier_benchmark", "--test-time 180"), False, None)
    assert kept.test_time == 180


def test_redisbench_admin_parameters() -> None:
    memtier_02 = plan_client(ToolConfig("memtier_benchmark", "--hide-histogram",
                                        (("test-time", 30), ("ratio", "1:1"))), False, 3)
    assert memtier_02.argv == ("--test-time=3", "--ratio=1:1", "--hide-histogram")
    bench = plan_client(ToolConfig("redis-benchmark", "", (
        ("clients", 16), ("requests", 2000000), ("threads", 2), ("pipeline", 1),
        ("keyspacelen", 1000), ("size", 64), ("command", "JSON.GET pass-100 'a b'")),
        min_tool_version="6.2.0"), False, 3)
    assert bench.argv == ("-c", "16", "-n", "2000000", "--threads", "2", "-P", "1", "-r",
                          "1000", "-d", "64", "JSON.GET", "pass-100", "a b")
    assert (bench.requests, bench.min_tool_version, bench.test_time) == ("2000000", "6.2.0",
                                                                         None)


@pytest.mark.parametrize(("config", "says"), [
    (ToolConfig("sidekiq-bench", "--workers 50"), "client tool 'sidekiq-bench' is not"),
    (ToolConfig("redis-benchmark", "", (("x", "file"),)), "parameter 'x'"),
    (ToolConfig("valkey-benchmark", "", (("duration", 3),)), "parameter 'duration'"),
    (ToolConfig("redis-benchmark", "-h 10.0.0.1 -n 5"), "-h is kvperf's to set"),
    (ToolConfig("memtier_benchmark", "--wait-ratio 1:1"), "--wait-ratio"),
])
def test_clients_refused_by_name(config: ToolConfig, says: str) -> None:
    with pytest.raises(ClientError, match=re.escape(says)):
        plan_client(config, False, None)
