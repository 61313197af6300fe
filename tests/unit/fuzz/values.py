"""Strategies and seeds of the property tests: any JSON value, a valid example of each
document (a metrics row, a harness result from docs/CLIENTS.md, its spec) and its mutations —
keys dropped, values replaced by any JSON value, one level down too."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

from kvperf.config.loader import FIELDS
from kvperf.definitions.parse import DB_KEYS, TOOL_KEYS, TOP_KEYS
from kvperf.results.row import FORMAT_VERSION
from tests.helpers import ROOT

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False), st.text(max_size=20),
    st.sampled_from(["SET", "GET", "0-1", "1:2", "zipf:0.9", "", "-1", "1e400"]))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12)

CONFIG_KEYS = sorted(FIELDS)
DEFINITION_KEYS = sorted(TOP_KEYS | DB_KEYS | TOOL_KEYS)

ROW: dict[str, Any] = {
    "kvperf_format": FORMAT_VERSION, "command": "SET", "data_size": 3, "pipeline": 1,
    "clients": 50, "requests": 1000, "rps": 100_000.0, "p50_latency_ms": 0.5,
    "status": "ok", "run": 1, "trial_id": "t1", "env": {}, "server": {"cpu_us_per_request": 3},
    "client": {"client_cpu_us_per_request": 4}, "config_set": None, "harness": None}


def _documented(kind: str) -> dict[str, Any]:
    """The docs' example of a harness contract document (docs/CLIENTS.md)."""
    text = (ROOT / "docs" / "CLIENTS.md").read_text()
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        document = json.loads(block)
        if isinstance(document, dict) and document.get("format") == kind:
            return document
    raise AssertionError(f"docs/CLIENTS.md has no {kind} example")


RESULT = _documented("kvperf-client-result")
SPEC = _documented("kvperf-client-workload")


def mutated(base: dict[str, Any]) -> st.SearchStrategy[Any]:
    """``base`` with keys dropped, values replaced (at the top or one level down), or a
    different ``kvperf_format``."""
    def change(draw: Any) -> Any:
        doc = json.loads(json.dumps(base))
        for _ in range(draw(st.integers(0, 4))):
            key = draw(st.sampled_from(sorted(doc)))
            action = draw(st.sampled_from(["drop", "replace", "inner", "format"]))
            if action == "drop":
                doc.pop(key, None)
            elif action == "replace":
                doc[key] = draw(json_values)
            elif action == "format":
                doc["kvperf_format"] = draw(st.integers(0, FORMAT_VERSION + 1))
            elif isinstance(doc.get(key), dict) and doc[key]:
                inner = draw(st.sampled_from(sorted(doc[key])))
                doc[key][inner] = draw(json_values)
        return doc
    return st.composite(lambda draw: change(draw))()
