"""A password kvperf hands to servers and load tools: never printed, logged or put in argv.

``Secret`` shows as ``***`` in every repr and str, so a dataclass holding one (an Endpoint, the
run's options) can be logged safely; ``reveal()`` is the one way to the text. ``take_env``
reads a password from the environment and removes it there, so no child process inherits it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import MutableMapping

SERVER_PASSWORD_ENV = "KVPERF_SERVER_PASSWORD"


class Secret:
    """A password; compares by value, shows as ***."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and secrets.compare_digest(self._value, other._value)

    def __hash__(self) -> int:
        return hash(Secret)


def take_env(name: str = SERVER_PASSWORD_ENV,
             environ: MutableMapping[str, str] | None = None) -> Secret | None:
    """The non-empty value of ``name`` as a Secret, removed from the environment."""
    env = os.environ if environ is None else environ
    value = env.pop(name, "")
    return Secret(value) if value else None


def generate() -> Secret:
    """A fresh random password (32 URL-safe characters)."""
    return Secret(secrets.token_urlsafe(24))


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8 and ::1 (the addresses only this host can reach)."""
    return ipaddress.ip_address(address).is_loopback


def config_quoted(secret: Secret) -> str:
    """The password as a double-quoted valkey.conf string, every byte hex-escaped (the
    config parser's ``\\xHH``), so no character of it can end or change the line."""
    return '"' + "".join(f"\\x{b:02x}" for b in secret.reveal().encode()) + '"'
