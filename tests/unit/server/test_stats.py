"""INFO commandstats and errorstats as kvperf reads them (pure parsers)."""

from __future__ import annotations

from kvperf.server.resp import parse_info
from kvperf.server.stats import (
    Collected,
    command_errors,
    command_stats,
    error_stats,
    with_replica_reads,
)

INFO = parse_info(
    b"# Commandstats\r\n"
    b"cmdstat_debug:calls=1,usec=66,usec_per_call=66.00,rejected_calls=0,failed_calls=1\r\n"
    b"cmdstat_lpush:calls=0,usec=0,usec_per_call=0.00,rejected_calls=7,failed_calls=0\r\n"
    b"cmdstat_client|setname:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,"
    b"failed_calls=0\r\n"
    b"cmdstat_get:calls=4,usec=8\r\n"  # a server before Redis 6.2: no error counts
    b"# Errorstats\r\n"
    b"errorstat_ERR:count=8\r\nerrorstat_WRONGTYPE:count=2\r\n")


def test_failed_and_rejected_calls_per_command() -> None:
    assert command_errors(INFO) == {"debug": (1, 0), "lpush": (0, 7),
                                    "client|setname": (0, 0), "get": (0, 0)}
    assert command_stats(INFO)["lpush"] == (0, 0)  # a rejected-only command is listed


def test_error_replies_by_prefix() -> None:
    assert error_stats(INFO) == {"ERR": 8, "WRONGTYPE": 2}


def test_replicas_add_their_reads_but_not_the_writes_they_replayed() -> None:
    primaries: Collected = {
        "keyspace_hits": 0, "keyspace_misses": 0, "node_calls": [{"set": 100}, {"set": 50}],
        "commandstats": {"set": {"calls": 150, "usec": 300, "usec_per_call": 2.0,
                                 "failed_calls": 0, "rejected_calls": 0}}}
    replicas: Collected = {
        "keyspace_hits": 90, "keyspace_misses": 10,
        "node_calls": [{"set": 100, "get": 60}, {"set": 50, "get": 40}],
        "commandstats": {"set": {"calls": 150, "usec": 200},
                         "get": {"calls": 100, "usec": 100, "failed_calls": 1}}}
    merged = with_replica_reads(primaries, replicas, {"get"})
    assert merged["commandstats"]["set"]["calls"] == 150
    assert merged["commandstats"]["get"] == {"calls": 100, "usec": 100, "usec_per_call": 1.0,
                                             "failed_calls": 1, "rejected_calls": 0}
    assert (merged["keyspace_hits"], merged["keyspace_misses"]) == (90, 10)
    assert merged["node_calls"] == [{"set": 100}, {"set": 50}, {"get": 60}, {"get": 40}]
    assert with_replica_reads(primaries, {}, {"get"}) == {}
