"""Cluster formation's pure parts: slot split, when a node's view is whole, failure text."""

from kvperf.server.cluster import SLOTS, describe_views, slot_ranges, view_ok
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
