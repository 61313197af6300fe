"""The JSON Schemas of the harness contract (``schema/*.schema.json``, shipped in the
package): the workload spec kvperf writes and the result a harness prints."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

WORKLOAD = "workload"
RESULT = "result"


@cache
def schema(kind: str) -> dict[str, Any]:
    """The schema document of ``kind`` (``workload`` or ``result``)."""
    text = resources.files("kvperf.clients").joinpath(f"schema/{kind}.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(kind: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # on first use: not at kvperf's start-up

    return Draft202012Validator(schema(kind))


def problems(document: object, kind: str, limit: int = 3) -> list[str]:
    """What is wrong with ``document`` by the schema of ``kind``, each as ``at PATH: why``
    (empty: it is valid); at most ``limit``, the first in document order first."""
    errors = sorted(_validator(kind).iter_errors(document),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [f"at {_path(e.absolute_path)}: {e.message}" for e in errors[:limit]]


def _path(parts: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    return f"${path}"
