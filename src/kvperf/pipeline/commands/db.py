"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from pathlib import Path

from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import DbPushRequest


def db_push_request(files: tuple[Path, ...], store: StoreFlags) -> DbPushRequest:
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    return DbPushRequest(files, store_request(store))
