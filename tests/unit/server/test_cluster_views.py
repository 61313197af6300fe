"""Cluster formation's pure parts: slot split, when a node's view is whole, failure text."""

from kvperf.server.cluster import SLOTS, describe_views, replicas_seen, slot_ranges, view_ok
from kvperf.server.resp import Endpoint


def test_slot_ranges_cover_every_slot_once() -> None:
    ranges = slot_ranges(3)
    assert ranges[0][0] == 0 and ranges[-1][1] == SLOTS - 1
    assert sum(last - first + 1 for first, last in ranges) == SLOTS
    assert all(ranges[i][1] + 1 == ranges[i + 1][0] for i in range(2))


def test_view_ok_needs_state_slots_and_every_node() -> None:
    whole = {"cluster_state": "ok", "cluster_slots_assigned": str(SLOTS),
             "cluster_known_nodes": "3"}
    assert view_ok(whole, 3)
    assert not view_ok({**whole, "cluster_known_nodes": "2"}, 3)
    assert not view_ok({**whole, "cluster_state": "fail"}, 3)
    assert not view_ok({**whole, "cluster_slots_assigned": "10923"}, 3)
    assert not view_ok({}, 3)


def test_describe_views_names_each_node() -> None:
    a, b = Endpoint("127.0.0.1", 7001), Endpoint("127.0.0.1", 7002)
    text = describe_views([a, b], [{"cluster_state": "fail", "cluster_slots_assigned": "8192",
                                    "cluster_known_nodes": "1"}, {}])
    assert text == ("127.0.0.1:7001 state fail, 8192 slots, 1 nodes known; "
                    "127.0.0.1:7002 did not answer CLUSTER INFO")


def test_replicas_seen_counts_live_replicas_with_a_primary() -> None:
    text = ("a 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
            "c 127.0.0.1:7003@17003 slave a 0 0 1 connected\n"
            "d 127.0.0.1:7004@17004 slave,fail a 0 0 1 disconnected\n"
            "e 127.0.0.1:7005@17005 master - 0 0 0 connected\n")
    assert replicas_seen(text) == 1
