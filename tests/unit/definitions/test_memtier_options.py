"""kvload memtier's option table as kvperf reads it (``kvload memtier --options-json``)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from kvperf.core.errors import DriverError
from kvperf.definitions import memtier_options
from kvperf.definitions.memtier_options import Spec, from_json, read


def _document(**changes: Any) -> dict[str, Any]:
    entry = {"name": "data-size-pattern", "short": None, "takes_value": True,
             "value_name": "R|S", "help": "h", "section": None, "supported": True,
             "refused": None, "refused_values": [{"value": "S", "reason": "at random"}]}
    return {"format": "kvload-memtier-options", "version": 1, "options": [entry], **changes}


def test_from_json_reads_the_fields_kvperf_uses() -> None:
    spec = from_json(json.dumps(_document())).options[0]
    assert spec == Spec("data-size-pattern", None, True, "", (("S", "at random"),))
    assert (spec.refused_value("S"), spec.refused_value("R")) == ("at random", "")


@pytest.mark.parametrize(("text", "says"), [
    (json.dumps(_document(version=2)), "version 2, not 'kvload-memtier-options' version 1"),
    (json.dumps(_document(format="kvload-report")), "format 'kvload-report'"),
    (json.dumps(_document(options=[{"name": "x"}])), "printed no option table"),
    ("[]", "printed no option table"),
    ("unrecognized option", "printed no option table"),
])
def test_from_json_refuses_anything_else(text: str, says: str) -> None:
    with pytest.raises(DriverError, match=says) as caught:
        from_json(text)
    assert "rerun scripts/install.sh" in str(caught.value)


def _fake_kvload(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "kvload"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_read_runs_kvload_memtier_options_json(tmp_path: Path) -> None:
    out = tmp_path / "table.json"
    out.write_text(json.dumps(_document()))
    kvload = _fake_kvload(tmp_path, f'[ "$*" = "memtier --options-json" ] && cat {out}')
    assert read(kvload).by_long["data-size-pattern"].takes_value


def test_read_names_an_old_kvload(tmp_path: Path) -> None:
    kvload = _fake_kvload(tmp_path, "echo \"unrecognized option '--options-json'\" >&2; exit 2")
    with pytest.raises(DriverError, match=r"exit 2; a kvload older than this kvperf"):
        read(kvload)


def test_the_installed_kvload_is_read_once() -> None:
    first = memtier_options.table()
    assert memtier_options.table() is first
    assert len(first.options) == 94  # memtier's and kvload's (kvload-json, time-limit, io)
    assert first.by_long["time-limit"].takes_value and first.by_long["time-limit"].refused == ""
    assert first.by_long["wait-ratio"].refused == "WAIT commands are not implemented"
    assert first.by_long["rate-limiting"].refused == ""
    assert first.by_short["n"].name == "requests"
    assert first.by_long["protocol"].refused_value("memcache_text") == "Redis protocol only"
