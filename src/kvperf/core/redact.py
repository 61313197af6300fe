"""The one redaction of credentials in URLs, for every message kvperf prints.

A password is replaced by ``***`` and the user name kept (``postgresql://bench:***@db/perf``);
a user part without a password is replaced as a whole, because there it is often a token
(``https://***@example.invalid/repo.git``). Works on any text: every URL in it is redacted.
``redact_command`` also hides the value of a password option in an argument list (another
process's command line, shown when it disturbed a trial).
"""

from __future__ import annotations

import re

# scheme://user@ (a user part holds no ':' '/' '@') or scheme://user:password@ (the password
# runs to the last '@' of the word, so one containing '@' or '/' is hidden whole).
_CREDENTIALS = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*)(?P<password>:\S*)?@")


def _hide(match: re.Match[str]) -> str:
    scheme, user = match["scheme"], match["user"]
    if match["password"] is not None:
        return f"{scheme}{user}:***@"
    return f"{scheme}***@"


def redact_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    return _CREDENTIALS.sub(_hide, text)


# Options whose value is a password in the clients and servers a benchmarking machine runs
# (valkey-cli/-benchmark -a, memtier --authenticate, --requirepass, --masterauth, --password).
_PASSWORD_OPTIONS = frozenset({"-a", "--pass", "--password", "--authenticate", "--auth",
                               "--requirepass", "--masterauth", "--tls-key-file-pass"})


def redact_command(argv: list[str]) -> str:
    """A command line joined by spaces, with URL credentials and password option values hidden
    (``-a pw`` and ``--password=pw`` show as ``-a ***`` and ``--password=***``)."""
    shown: list[str] = []
    for i, word in enumerate(argv):
        option, equals, _ = word.partition("=")
        if equals and option in _PASSWORD_OPTIONS:
            word = f"{option}=***"
        elif i and argv[i - 1] in _PASSWORD_OPTIONS:
            word = "***"
        shown.append(redact_urls(word))
    return " ".join(shown)
