"""--remote-ports: the range's syntax and the order a trial tries ports in (pure parts of
server/remote.py; the retry itself runs against a real sshd in test_server_host_ssh.py)."""

from __future__ import annotations

import pytest

from kvperf.core.errors import UsageError
from kvperf.server.remote import DEFAULT_PORTS, parse_ports, port_order


def test_ranges_and_single_ports() -> None:
    assert parse_ports("30000-30099") == (30000, 30099)
    assert parse_ports("7000") == (7000, 7000)
    assert DEFAULT_PORTS[0] < DEFAULT_PORTS[1]


@pytest.mark.parametrize("text", ["", "x-1", "30010-30000", "0-10", "65000-70000", "1-2-3"])
def test_a_bad_range_is_refused_naming_it(text: str) -> None:
    with pytest.raises(UsageError, match=f"--remote-ports '{text}': expected LO-HI"):
        parse_ports(text)


def test_ports_are_tried_from_the_draw_on_wrapping_within_the_range() -> None:
    assert port_order((100, 104), 103, 5) == [103, 104, 100, 101, 102]
    assert port_order((100, 104), 100, 3) == [100, 101, 102]
    assert port_order((100, 101), 101, 5) == [101, 100]  # never more than the range holds
    assert port_order((7, 7), 7, 5) == [7]
