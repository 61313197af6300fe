"""Grafana's dashboards name metrics from the catalogue (results/metrics.py), with the
catalogue's units: a metric renamed or dropped there fails here, not on a dashboard."""

from __future__ import annotations

import json
import re

from kvperf.results.metrics import BY_NAME
from tests.helpers import ROOT

DASHBOARDS = sorted((ROOT / "grafana" / "provisioning" / "dashboards").glob("*.json"))


def _variables(dashboard: dict[str, object]) -> dict[str, str]:
    templating = dashboard.get("templating")
    items = templating.get("list", []) if isinstance(templating, dict) else []
    return {v["name"]: str(v.get("query", "")) for v in items if isinstance(v, dict)}


def test_every_metric_a_dashboard_queries_is_in_the_catalogue() -> None:
    assert DASHBOARDS
    for path in DASHBOARDS:
        text = path.read_text()
        dashboard = json.loads(text)
        named = set(re.findall(r"m\.name = '([^'$]+)'", text))
        latency = _variables(dashboard).get("latency", "")
        choices = {c for c in latency.split(",") if c}
        assert named and choices, path
        for name in named | choices:
            assert name in BY_NAME, f"{path.name}: {name!r} is not in results/metrics.py"
        assert all(BY_NAME[c].family == "latency" and BY_NAME[c].unit == "ms"
                   for c in choices), choices
