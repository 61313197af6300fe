"""A minimal blocking RESP2 client: the one module that opens sockets to servers.

Used for readiness (PING), CONFIG SET, cluster formation, INFO, shutdown and seeding. Seeding
pipelines many commands per round trip; replies are parsed fully so errors are never missed.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from kvperf.core.secret import Secret

Reply = Union[bytes, int, None, list["Reply"], "RespError"]


class RespError(Exception):
    """An error reply (-ERR …) from the server."""


class ConnectionLost(Exception):
    """The server closed the connection or could not be reached."""


@dataclass(frozen=True)
class Endpoint:
    """Where a server listens; ``tls_ca`` set means connect with TLS verified by that CA;
    ``password`` set means AUTH first (it shows as *** in reprs and never in ``str``)."""

    host: str
    port: int
    tls_ca: Path | None = None
    password: Secret | None = None

    def __str__(self) -> str:
        return f"{self.host}:{self.port}{' (tls)' if self.tls_ca else ''}"


def encode(args: tuple[str | bytes | int, ...] | list[str | bytes | int]) -> bytes:
    """Encode one command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class RespClient:
    """One connection. ``call`` sends a command; ``pipeline`` sends many, reads all replies."""

    def __init__(self, endpoint: Endpoint, timeout: float = 5.0) -> None:
        try:
            sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout)
        except OSError as exc:
            raise ConnectionLost(f"cannot connect to {endpoint}: {exc.strerror or exc}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if endpoint.tls_ca:
            context = ssl.create_default_context(cafile=str(endpoint.tls_ca))
            sock = context.wrap_socket(sock, server_hostname=endpoint.host)
        self._sock = sock
        self._buf = bytearray()
        self._pos = 0
        if endpoint.password is not None:
            self._auth(endpoint)

    def _auth(self, endpoint: Endpoint) -> None:
        assert endpoint.password is not None
        try:
            self.call("AUTH", endpoint.password.reveal())
        except RespError as exc:
            self.close()
            raise ConnectionLost(f"AUTH at {endpoint} refused: {exc}") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def __enter__(self) -> RespClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, *args: str | bytes | int) -> Reply:
        """Send one command and return its reply; raise RespError on an error reply."""
        reply = self.pipeline([args])[0]
        if isinstance(reply, RespError):
            raise reply
        return reply

    def pipeline(self, commands: list[tuple[str | bytes | int, ...]]) -> list[Reply]:
        """Send all commands at once and return their replies (errors as RespError values)."""
        try:
            self._sock.sendall(b"".join(encode(c) for c in commands))
            return [self._read_reply() for _ in commands]
        except (OSError, ssl.SSLError) as exc:
            raise ConnectionLost(f"connection lost: {exc}") from None

    def _fill(self) -> None:
        chunk = self._sock.recv(1 << 20)
        if not chunk:
            raise ConnectionLost("server closed the connection")
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += chunk

    def _line(self) -> bytes:
        while (end := self._buf.find(b"\r\n", self._pos)) < 0:
            self._fill()
        line = bytes(self._buf[self._pos : end])
        self._pos = end + 2
        return line

    def _exact(self, size: int) -> bytes:
        while len(self._buf) - self._pos < size + 2:
            self._fill()
        data = bytes(self._buf[self._pos : self._pos + size])
        self._pos += size + 2
        return data

    def _read_reply(self) -> Reply:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self._exact(size)
        if kind == b"*":
            count = int(rest)
            return None if count < 0 else [self._read_reply() for _ in range(count)]
        raise ConnectionLost(f"unexpected reply from server: {line[:40]!r}")


def parse_info(text: bytes | str) -> dict[str, str]:
    """Turn an INFO reply into a flat field → value mapping (bytes that are not UTF-8, as
    a server may report a path or a name in, become U+FFFD: tests/unit/fuzz)."""
    raw = text.decode(errors="replace") if isinstance(text, bytes) else text
    fields = {}
    for line in raw.splitlines():
        if ":" in line and not line.startswith("#"):
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields
