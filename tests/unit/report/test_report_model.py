"""The report's numbers (report/model.py) and its versioned JSON, pinned by a golden
structure file: every key and value type of the document, so a changed shape is a
deliberate change of ``kvperf_report`` (update the golden file with KVPERF_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from kvperf.report.model import SPECTRUM_QUANTILES, build, to_json
from tests.unit.report.report_rows import side, with_pipeline_1

GOLDEN = Path(__file__).parent / "golden" / "report_structure.json"
SWEPT_GOLDEN = Path(__file__).parent / "golden" / "report_sweeps_structure.json"


def skeleton(value: Any) -> Any:
    """Keys and value types; a list as the one skeleton all its items share."""
    if isinstance(value, dict):
        return {k: skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        shapes = [skeleton(v) for v in value]
        assert all(s == shapes[0] for s in shapes), "a list mixes shapes"
        return [shapes[0]] if shapes else []
    if value is None:
        return "null"
    return {bool: "bool", int: "number", float: "number", str: "string"}[type(value)]


def ab_document(swept: bool = False) -> dict[str, Any]:
    sides = [with_pipeline_1(side("A", 1.0)) if swept else side("A", 1.0),
             with_pipeline_1(side("B", 1.1)) if swept else side("B", 1.1)]
    for s in sides:
        s.rows[0]["client_saturated"] = True  # a warning on each side
    return to_json(build(sides))


def test_the_json_report_with_sweeps_keeps_its_golden_structure() -> None:
    document = ab_document(swept=True)
    json.dumps(document, allow_nan=False)
    if os.environ.get("KVPERF_UPDATE_GOLDEN"):
        SWEPT_GOLDEN.write_text(json.dumps(skeleton(document), indent=2) + "\n")
    assert skeleton(document) == json.loads(SWEPT_GOLDEN.read_text())
    assert ab_document()["sweeps"] == []  # nothing varies but the command


def test_the_json_report_sweeps() -> None:
    sweeps = ab_document(swept=True)["sweeps"]
    assert [(s["side"], s["sweep"]["key"], s["sweep"]["values"]) for s in sweeps] == [
        ("A", "pipeline", ["1", "16"]), ("B", "pipeline", ["1", "16"])]
    line = next(ln for ln in sweeps[0]["sweep"]["lines"] if ln["series"].startswith("SET"))
    assert [p["speedup"] for p in line["points"]] == [1.0, pytest.approx(4.0)]


def test_the_json_report_keeps_its_golden_structure() -> None:
    document = ab_document()
    json.dumps(document, allow_nan=False)  # strict JSON: no NaN or infinity
    if os.environ.get("KVPERF_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(skeleton(document), indent=2) + "\n")
    assert skeleton(document) == json.loads(GOLDEN.read_text())


def test_the_json_report_numbers() -> None:
    document = ab_document()
    assert document["kvperf_report"] == 8
    a_set = next(s for s in document["series"] if s["side"] == "A" and "SET" in s["series"])
    assert a_set["rps"] == [100_000.0, 101_000.0, 102_000.0] and a_set["runs"] == 3
    assert a_set["latency_source"] == "merged histograms"
    assert a_set["latency_ms"]["p50"] == pytest.approx(0.2, rel=0.01)  # 200 us corrected
    assert a_set["latency_ms"]["p99_9"] == pytest.approx(1.0, rel=0.01)
    spectrum = next(s for s in document["spectra"] if s["side"] == "A")
    assert spectrum["percentiles"][0] == 0 and spectrum["percentiles"][-1] == \
        pytest.approx(99.999)
    assert spectrum["corrected_ms"][-1] == pytest.approx(5.0, rel=0.01)  # the one 5 ms
    assert spectrum["service_ms"][0] == pytest.approx(0.15, rel=0.01)
    rps = next(r for r in document["comparison"]["rows"]
               if r["metric"] == "rps" and "SET" in r["series"])
    assert rps["ratio"] == pytest.approx(1.1) and rps["verdict"] == "improvement"
    assert document["comparison"]["paired"]  # both sides carry a revision and pair by run


def test_the_spectrum_axis_is_even_on_log_one_over_one_minus_q() -> None:
    steps = [math.log10(1 / (1 - q / 100)) for q in SPECTRUM_QUANTILES]
    assert steps[0] == 0 and steps[-1] == pytest.approx(5)
    assert all(b - a == pytest.approx(0.1) for a, b in itertools.pairwise(steps))


def test_noise_warnings() -> None:
    failing = side("A", 1.0, client_saturated=True)
    failing.rows[0].update(status="failed", error="server crashed")
    failing.rows[1]["env"] = {**failing.rows[1]["env"], "quick": True, "governor": "powersave"}
    report = build([failing])
    kinds = {w.kind: w.message for w in report.sources[0].warnings}
    assert set(kinds) == {"failed_trials", "client_saturated", "quick_mode", "cpu_governor"}
    assert "1 of 6 trials failed (first: server crashed)" in kinds["failed_trials"]
    assert report.sources[0].failed == 1 and report.comparison is None


def test_sides_without_revisions_are_compared_unpaired() -> None:
    report = build([side("A", 1.0, revision=None), side("B", 1.0, revision=None)])
    assert report.comparison is not None and not report.comparison.paired


def test_seed_format_rows_are_reported_unpaired_without_spectra() -> None:
    seed = ("kvperf_format", "trial_id", "run", "revision", "histogram_file", "env", "status")
    sources = [side(name, scale) for name, scale in (("A", 1.0), ("B", 1.1))]
    for source in sources:
        for r in source.rows:
            for key in seed:
                r.pop(key)
    report = build(sources)
    assert report.spectra == [] and report.comparison is not None
    assert not report.comparison.paired and report.comparison.rows
    assert {s.latency_source for s in report.series} == {"median of runs"}
