"""The password wrapper: never shown, read once from the environment, safely quoted."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kvperf.core import secret
from kvperf.core.secret import Secret


def test_a_secret_never_shows_in_repr_or_str() -> None:
    @dataclass
    class Holder:
        password: Secret

    held = Holder(Secret("hunter2"))
    assert "hunter2" not in repr(held) + str(held.password) + f"{held}"
    assert held.password.reveal() == "hunter2"
    assert Secret("a") == Secret("a") and Secret("a") != Secret("b")


def test_take_env_removes_the_variable() -> None:
    env = {secret.SERVER_PASSWORD_ENV: "pw", "OTHER": "x"}
    taken = secret.take_env(environ=env)
    assert taken is not None and taken.reveal() == "pw"
    assert env == {"OTHER": "x"}
    assert secret.take_env(environ={secret.SERVER_PASSWORD_ENV: ""}) is None


def test_generated_passwords_are_long_and_fresh() -> None:
    first, second = secret.generate(), secret.generate()
    assert first != second and len(first.reveal()) >= 32


@pytest.mark.parametrize(("address", "loopback"), [("127.0.0.1", True), ("127.1.2.3", True),
                                                    ("::1", True), ("10.213.0.1", False),
                                                    ("0.0.0.0", False)])
def test_loopback(address: str, loopback: bool) -> None:
    assert secret.is_loopback(address) is loopback


def test_config_quoting_escapes_every_byte() -> None:
    quoted = secret.config_quoted(Secret('a" b\n'))
    assert quoted == '"\\x61\\x22\\x20\\x62\\x0a"'
