"""Dataset generation: deterministic per seed, each transform doing what the seed describes."""

from __future__ import annotations

import csv
import io
from typing import Any

from kvperf.config.datasets import WIKIPEDIA_NOTE, generate_csv, parse_generation


def _spec(transforms: list[dict[str, Any]], doc_count: int = 200, size: int = 60) -> Any:
    (spec,) = parse_generation({"d.xml": {"doc_count": doc_count, "fields": [
        {"name": "f", "size": size, "transforms": transforms}]}}, "dataset_generation")
    return spec


def _column(text: str, name: str = "f") -> list[str]:
    return [row[name] for row in csv.DictReader(io.StringIO(text))]


def test_same_seed_same_bytes_other_seed_other_bytes() -> None:
    spec = _spec([{"type": "wikipedia"}, {"type": "inject", "term": "M", "percentage": 10}])
    assert generate_csv(spec, 1) == generate_csv(spec, 1)
    assert generate_csv(spec, 1) != generate_csv(spec, 2)
    assert spec.cache_key(1) == spec.cache_key(1) != spec.cache_key(2)
    assert spec.notes == (WIKIPEDIA_NOTE,)
    assert generate_csv(spec, 1).splitlines()[0] == "id,f"


def test_base_text_has_the_size_and_inject_hits_the_percentage() -> None:
    texts = _column(generate_csv(_spec([{"type": "synthetic"},
                                        {"type": "inject", "term": "MARK",
                                         "percentage": 25}], 2000), 3))
    plain = [t for t in texts if "MARK" not in t.split()]
    assert all(60 <= len(t) <= 80 for t in plain)
    assert 400 <= len(texts) - len(plain) <= 600


def test_repeat_prefix_numeric_and_tags() -> None:
    repeated = _column(generate_csv(_spec([{"type": "repeat", "term": "dup", "count": 3}]), 1))
    assert all(t == "dup dup dup" for t in repeated)
    prefixed = " ".join(_column(generate_csv(_spec([{"type": "synthetic"}, {
        "type": "prefix_gen", "prefix": "pre", "count": 5}]), 1)))
    assert {w for w in prefixed.split() if w.startswith("pre")} <= {f"pre{i}" for i in range(5)}
    assert "pre0" in prefixed.split()
    numbers = [int(v) for v in _column(generate_csv(_spec([
        {"type": "numeric_range", "min": 10, "max": 20}]), 1))]
    assert min(numbers) >= 10 and max(numbers) < 20 and len(set(numbers)) > 5
    tags = _column(generate_csv(_spec([{"type": "tag_list", "count": 4, "per_doc": 2,
                                        "separator": "|"}]), 1))
    assert all(len(t.split("|")) == 2 and set(t.split("|")) <= {"tag0", "tag1", "tag2", "tag3"}
               for t in tags)


def test_proximity_phrases_best_and_worst_case() -> None:
    best = _column(generate_csv(_spec([{"type": "synthetic"}, {
        "type": "proximity_phrase", "term_count": 3, "combinations": 1, "repeats": 10}]), 1))
    assert "p0t0 p0t1 p0t2" in best[9] and "p1t0 p1t1 p1t2" in best[10]
    assert all(t.split().count("p0t1") == 1 for t in best[:10])
    worst = _column(generate_csv(_spec([{"type": "proximity_phrase", "term_count": 3,
                                         "combinations": 5}]), 1))
    assert all(t.split().count(f"p{i % 100}t2") == 5 and f"p{i % 100}t0 p{i % 100}t1" in t
               for i, t in enumerate(worst))


def test_query_generation_matches_the_documents_phrases() -> None:
    (spec,) = parse_generation({"q.csv": {"type": "proximity_phrase", "doc_count": 3,
                                          "term_count": 5}}, "query_generation")
    rows = list(csv.DictReader(io.StringIO(generate_csv(spec, 9))))
    assert rows[2] == {"id": "2", "query": "p2t0 p2t1 p2t2 p2t3 p2t4", "term": "p2t0"}
    (fields,) = parse_generation({"x.xml": {"doc_count": 2, "generate_fields": {
        "count": 3, "size": 10}}}, "dataset_generation")
    assert generate_csv(fields, 1).splitlines()[0] == "id,field0,field1,field2"


def test_json_document_is_compact_nested_json_with_the_documented_paths() -> None:
    import json

    spec = _spec([{"type": "json_document", "depth": 3, "width": 2, "array": 4}],
                 doc_count=50)
    docs = _column(generate_csv(spec, 9))
    assert len(docs) == 50 and all(" " not in d for d in docs)  # one word on a command line
    first = json.loads(docs[0])
    assert first["id"] == 0 and len(first["items"]) == 4 and {"f0", "f1"} <= set(first)
    assert isinstance(first["nested"]["nested"]["price"], int)
    assert "nested" not in first["nested"]["nested"]  # depth 3: two levels below the top
    assert docs == _column(generate_csv(spec, 9)) != _column(generate_csv(spec, 10))
