"""Two network namespaces joined by a veth pair, made and removed by a test (root, `ip`):
the only networks beyond loopback the tests use."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator

from tests.helpers import require_binary


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def veth_namespaces(prefix: str, server_ip: str, client_ip: str) -> Iterator[tuple[str, str]]:
    """(server ns, client ns) joined by a veth pair, addresses ``server_ip``/``client_ip``
    on a /24; deleted on leaving (deleting a namespace deletes its end of the pair)."""
    require_binary("ip")
    tag = f"{os.getpid() % 100000}"
    server, client = f"{prefix}-s-{tag}", f"{prefix}-c-{tag}"
    created: list[str] = []
    try:
        for ns in (server, client):
            _ip("netns", "add", ns)
            created.append(ns)
        _ip("link", "add", f"{prefix}{tag}s", "netns", server, "type", "veth",
            "peer", "name", f"{prefix}{tag}c", "netns", client)
        for ns, dev, address in ((server, f"{prefix}{tag}s", server_ip),
                                 (client, f"{prefix}{tag}c", client_ip)):
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield server, client
    finally:
        for ns in created:
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=30)
