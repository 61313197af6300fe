"""The types of JSON documents as Python holds them (json.loads' output, json.dumps' input).

``JsonValue`` is exact; ``JsonObject`` is a decoded or to-be-encoded object whose shape the
code reading or writing it checks (a config file, a tool's report, an output document): the
one place the package spells an open mapping of unchecked values.
"""

from __future__ import annotations

from typing import Any

JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject = dict[str, Any]
