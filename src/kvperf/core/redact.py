"""The one redaction of credentials in URLs, for every message kvperf prints.

A password is replaced by ``***`` and the user name kept (``postgresql://bench:***@db/perf``);
a user part without a password is replaced as a whole, because there it is often a token
(``https://***@example.invalid/repo.git``). Works on any text: every URL in it is redacted.
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
