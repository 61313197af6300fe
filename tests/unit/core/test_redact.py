"""core/redact.py: the one redaction of URL credentials, used by store and build."""

from __future__ import annotations

import pytest

from kvperf.core.redact import redact_command, redact_urls


@pytest.mark.parametrize(("text", "shown"), [
    ("postgresql+psycopg://user:hunter2@db.example:5432/perf",
     "postgresql+psycopg://user:***@db.example:5432/perf"),
    ("https://user:tok@example.invalid/r.git", "https://user:***@example.invalid/r.git"),
    ("https://ghp_token@example.invalid/r.git", "https://***@example.invalid/r.git"),
    ("postgresql://u:p@ss/w@host/db", "postgresql://u:***@host/db"),
    ("/srv/valkey", "/srv/valkey"),
    ("sqlite:////tmp/kvperf.db", "sqlite:////tmp/kvperf.db"),
    ("https://example.invalid/a@b", "https://example.invalid/a@b"),
])
def test_credentials_are_replaced_and_the_rest_kept(text: str, shown: str) -> None:
    assert redact_urls(text) == shown


def test_every_url_in_a_message_is_redacted() -> None:
    message = ("fatal: unable to access 'https://u:secret@example.invalid/r.git/' "
               "(mirror of https://tok@example.invalid/s.git)")
    shown = redact_urls(message)
    assert "secret" not in shown and "tok@" not in shown
    assert shown.startswith("fatal: unable to access 'https://u:***@example.invalid/r.git/'")


def test_a_command_line_hides_password_options_and_url_credentials() -> None:
    argv = ["kvperf", "run", "--db", "postgresql://kvperf:s3cret@127.0.0.1/x", "-a", "pw1",
            "--requirepass", "pw2", "--password=pw3", "--name", "-a"]
    shown = redact_command(argv)
    assert shown == ("kvperf run --db postgresql://kvperf:***@127.0.0.1/x -a *** "
                     "--requirepass *** --password=*** --name -a")
