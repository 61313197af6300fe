"""Stable identities: a short hash of canonical JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping


def stable_id(params: Mapping[str, object], length: int = 12) -> str:
    """Hash of the parameters' canonical JSON (sorted keys): equal parameters, equal id."""
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:length]
