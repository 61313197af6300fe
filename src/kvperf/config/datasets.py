"""The seed's ``dataset_generation`` / ``query_generation``: typed specs and deterministic CSV.

Pure: a spec and a seed → CSV text (same seed, same bytes; ``random.Random`` seeded with a
string is stable across runs and platforms). Documents get a column ``id`` and one per
field; queries get ``id`` and the columns their type names. Base text comes from a fixed
synthetic vocabulary: the seed's ``wikipedia`` source needs a download, which kvperf never
does at run time, so ``wikipedia`` (and ``synthetic``) produce synthetic words, noted in
the spec's ``notes``. Datasets named ``*.xml`` are written as CSV all the same.

Field transforms, applied in order: ``synthetic``/``wikipedia`` (base text of ``size``
characters), ``inject`` (``term`` into ``percentage`` % of the documents), ``repeat``
(``term`` — default the text's first word — appended ``count`` times), ``prefix_gen``
(``count`` words ``<prefix><n>`` replace words), ``proximity_phrase`` (``term_count`` terms
of one of ``patterns`` phrases, written adjacent once — ``combinations`` 1, the best case —
or scattered ``combinations`` times before the adjacent phrase, ``repeats`` documents per
pattern), ``numeric_range`` (a number in ``min``…``max``), ``tag_list`` (``per_doc`` of
``count`` tags ``tag<n>`` joined by ``separator``) and ``json_document`` (a nested JSON
object, ``depth`` levels of ``width`` words, for JSON.SET; ``json_document`` below).
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass, field
from typing import Any

from kvperf.core.identity import stable_id
from kvperf.core.jsontypes import JsonObject

GENERATOR_VERSION = 1  # part of every cache key: bump when the output of a spec changes
WIKIPEDIA_NOTE = ("'wikipedia' needs a download; kvperf generates synthetic words from a "
                  "fixed vocabulary instead (deterministic from the seed)")
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "do", "fe",
              "gu", "ha", "ji", "bo", "cy", "wu", "xe")
VOCABULARY = tuple(a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "n", "s"))
_TRANSFORMS = {
    "wikipedia": set(), "synthetic": set(), "inject": {"term", "percentage"},
    "repeat": {"term", "count"}, "prefix_gen": {"prefix", "count"},
    "proximity_phrase": {"term_count", "combinations", "repeats", "patterns"},
    "numeric_range": {"min", "max", "decimals"},
    "tag_list": {"count", "per_doc", "separator"},
    "json_document": {"depth", "width", "array"},
}
_QUERY_TYPES = {
    "proximity_phrase": {"doc_count", "term_count", "patterns", "type"},
    "terms": {"doc_count", "term_count", "type"},
    "numeric_range": {"doc_count", "min", "max", "width", "type"},
    "tag_list": {"doc_count", "count", "type"},
}


@dataclass(frozen=True)
class FieldSpec:
    name: str
    size: int
    transforms: tuple[JsonObject, ...]


@dataclass(frozen=True)
class GenerationSpec:
    """One generated dataset: documents (``fields``) or queries (``query``)."""

    name: str
    doc_count: int
    fields: tuple[FieldSpec, ...] = ()
    query: JsonObject | None = None
    seed: int | None = None  # the spec's own seed; default the config's
    notes: tuple[str, ...] = field(default=())

    def cache_key(self, seed: int) -> str:
        return stable_id({"v": GENERATOR_VERSION, "name": self.name, "seed": self.seed_for(seed),
                          "doc_count": self.doc_count, "query": self.query,
                          "fields": [[f.name, f.size, list(f.transforms)]
                                     for f in self.fields]}, length=16)

    def seed_for(self, seed: int) -> int:
        return self.seed if self.seed is not None else seed


def _int(path: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{path} must be an integer ≥ {minimum}, got {value!r}")
    return value


def _transform(path: str, raw: Any) -> JsonObject:
    if not isinstance(raw, dict) or raw.get("type") not in _TRANSFORMS:
        raise ValueError(f"{path} must be an object with 'type' one of "
                         f"{', '.join(_TRANSFORMS)}, got {raw!r}")
    unknown = set(raw) - _TRANSFORMS[raw["type"]] - {"type"}
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r} for transform "
                         f"{raw['type']!r} (known: {', '.join(sorted(_TRANSFORMS[raw['type']]))})")
    for key in ("count", "term_count", "combinations", "repeats", "patterns", "per_doc"):
        if key in raw:
            _int(f"{path}.{key}", raw[key])
    if "percentage" in raw and not (isinstance(raw["percentage"], int | float)
                                    and 0 <= raw["percentage"] <= 100):
        raise ValueError(f"{path}.percentage must be a number in 0…100")
    if raw["type"] == "inject" and not isinstance(raw.get("term"), str):
        raise ValueError(f"{path}: inject needs 'term' (a string)")
    return dict(raw)


def _field(path: str, raw: Any) -> FieldSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError(f"{path} must be an object with a 'name'")
    unknown = set(raw) - {"name", "size", "transforms"}
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r} (known: name, size, "
                         "transforms)")
    items = raw.get("transforms", [{"type": "synthetic"}])
    if not isinstance(items, list):
        raise ValueError(f"{path}.transforms must be a list")
    return FieldSpec(raw["name"], _int(f"{path}.size", raw.get("size", 100)),
                     tuple(_transform(f"{path}.transforms[{i}]", t) for i, t in enumerate(items)))


def _document_spec(path: str, name: str, raw: JsonObject) -> GenerationSpec:
    unknown = set(raw) - {"doc_count", "fields", "generate_fields", "seed"}
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r} (known: doc_count, "
                         "fields, generate_fields, seed)")
    fields = [_field(f"{path}.fields[{i}]", f) for i, f in enumerate(raw.get("fields", []))]
    compact = raw.get("generate_fields")
    if compact is not None:
        if not isinstance(compact, dict):
            raise ValueError(f"{path}.generate_fields must be an object")
        count = _int(f"{path}.generate_fields.count", compact.get("count"))
        fields += [_field(f"{path}.generate_fields",
                          {"name": f"field{i}", "size": compact.get("size", 100),
                           "transforms": compact.get("transforms", [{"type": "synthetic"}])})
                   for i in range(count)]
    if not fields:
        raise ValueError(f"{path}: needs 'fields' or 'generate_fields'")
    notes = (WIKIPEDIA_NOTE,) if any(t["type"] == "wikipedia" for f in fields
                                     for t in f.transforms) else ()
    seed = _int(f"{path}.seed", raw["seed"], 0) if "seed" in raw else None
    return GenerationSpec(name, _int(f"{path}.doc_count", raw.get("doc_count")),
                          tuple(fields), None, seed, notes)


def _query_spec(path: str, name: str, raw: JsonObject) -> GenerationSpec:
    kind = raw.get("type")
    if kind not in _QUERY_TYPES:
        raise ValueError(f"{path}.type must be one of {', '.join(_QUERY_TYPES)}, got {kind!r}")
    unknown = set(raw) - _QUERY_TYPES[kind] - {"seed"}
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r} for query type {kind!r}")
    seed = _int(f"{path}.seed", raw["seed"], 0) if "seed" in raw else None
    query = {k: v for k, v in raw.items() if k not in ("doc_count", "seed")}
    return GenerationSpec(name, _int(f"{path}.doc_count", raw.get("doc_count")), (), query,
                          seed)


def parse_generation(raw: Any, key: str) -> tuple[GenerationSpec, ...]:
    """``dataset_generation`` or ``query_generation`` → specs (ValueError naming the path)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ValueError(f"{key} must be an object of dataset names to specs")
    out = []
    for name, spec in raw.items():
        path = f"{key}.{name}"
        if not isinstance(spec, dict):
            raise ValueError(f"{path} must be an object")
        parse = _query_spec if key == "query_generation" else _document_spec
        out.append(parse(path, name, spec))
    return tuple(out)


def _words(rng: random.Random, size: int) -> list[str]:
    words: list[str] = []
    length = -1
    while length < size:
        # Zipf-like: low indices are common, as in natural text.
        word = VOCABULARY[int(len(VOCABULARY) * rng.random() ** 3)]
        words.append(word)
        length += len(word) + 1
    return words


def _phrase(pattern: int, term_count: int) -> list[str]:
    return [f"p{pattern}t{k}" for k in range(term_count)]


def _apply(words: list[str], t: JsonObject, doc: int, rng: random.Random,
           size: int) -> list[str]:
    kind = t["type"]
    if kind in ("wikipedia", "synthetic"):
        return words + _words(rng, size)
    if kind == "inject":
        if rng.random() * 100 < float(t.get("percentage", 100)):
            words.insert(rng.randint(0, len(words)), str(t["term"]))
        return words
    if kind == "repeat":
        term = str(t.get("term") or (words[0] if words else "repeat"))
        return words + [term] * int(t.get("count", 2))
    if kind == "prefix_gen":
        prefix, count = str(t.get("prefix", "pre")), int(t.get("count", 10))
        return [f"{prefix}{rng.randrange(count)}" if rng.random() < 0.2 else w for w in words]
    if kind == "proximity_phrase":
        return _proximity(words, t, doc, rng)
    if kind == "numeric_range":
        return [_number(rng, t)]
    if kind == "json_document":
        return [json_document(rng, doc, int(t.get("depth", 3)), int(t.get("width", 3)),
                              int(t.get("array", 4)))]
    return [str(t.get("separator", ",")).join(
        f"tag{n}" for n in sorted(rng.sample(range(int(t.get("count", 10))),
                                             min(int(t.get("per_doc", 1)),
                                                 int(t.get("count", 10))))))]


def json_document(rng: random.Random, doc: int, depth: int, width: int, array: int) -> str:
    """A nested JSON object, compact (no spaces: one word on a command line): ``width``
    keys per level (a word, a number, an array of ``array`` numbers), ``depth`` levels
    under ``nested``; every level has ``price`` and ``items``, so paths such as
    ``$.nested.nested.price`` and ``$.items`` exist in every document."""
    def level(left: int) -> dict[str, object]:
        node: dict[str, object] = {"id": doc, "price": rng.randrange(1, 1000),
                                   "items": [rng.randrange(100) for _ in range(array)]}
        for k in range(width):
            node[f"f{k}"] = _words(rng, 8)[0]
        if left > 1:
            node["nested"] = level(left - 1)
        return node
    return json.dumps(level(max(depth, 1)), separators=(",", ":"))


def _proximity(words: list[str], t: JsonObject, doc: int,
               rng: random.Random) -> list[str]:
    term_count, combinations = int(t.get("term_count", 5)), int(t.get("combinations", 1))
    pattern = (doc // int(t.get("repeats", 1))) % int(t.get("patterns", 100))
    phrase = _phrase(pattern, term_count)
    out = list(words)
    for _ in range(combinations - 1):  # worst case: each term scattered among noise first
        for term in phrase:
            out.insert(rng.randint(0, len(out)), term)
    at = rng.randint(0, len(out))
    return out[:at] + phrase + out[at:]


def _number(rng: random.Random, t: JsonObject) -> str:
    low, high = float(t.get("min", 0)), float(t.get("max", 1000))
    decimals = int(t.get("decimals", 0))
    value = low + rng.random() * (high - low)
    return f"{value:.{decimals}f}" if decimals else str(int(value))


def _document(spec: GenerationSpec, doc: int, rng: random.Random) -> list[str]:
    row = [str(doc)]
    for f in spec.fields:
        words: list[str] = []
        for t in f.transforms:
            words = _apply(words, t, doc, rng, f.size)
        row.append(" ".join(words))
    return row


def _query(spec: GenerationSpec, n: int, rng: random.Random) -> tuple[list[str], list[str]]:
    q = spec.query or {}
    kind = q["type"]
    if kind == "proximity_phrase":
        phrase = _phrase(n % int(q.get("patterns", 100)), int(q.get("term_count", 5)))
        return ["query", "term"], [" ".join(phrase), phrase[0]]
    if kind == "terms":
        words = [VOCABULARY[int(len(VOCABULARY) * rng.random() ** 3)]
                 for _ in range(int(q.get("term_count", 1)))]
        return ["query", "term"], [" ".join(words), words[0]]
    if kind == "numeric_range":
        low, high = float(q.get("min", 0)), float(q.get("max", 1000))
        start = low + rng.random() * (high - low)
        return ["min", "max"], [str(int(start)), str(int(start + float(q.get("width", 10))))]
    return ["tag"], [f"tag{rng.randrange(int(q.get('count', 10)))}"]


def generate_csv(spec: GenerationSpec, seed: int) -> str:
    """The dataset as CSV text (header line first): byte-identical for the same seed."""
    rng = random.Random(f"kvperf-dataset:{GENERATOR_VERSION}:{spec.seed_for(seed)}:{spec.name}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if spec.query is None:
        writer.writerow(["id", *(f.name for f in spec.fields)])
        for doc in range(spec.doc_count):
            writer.writerow(_document(spec, doc, rng))
        return out.getvalue()
    header: list[str] = []
    for n in range(spec.doc_count):
        header, values = _query(spec, n, rng)
        if n == 0:
            writer.writerow(["id", *header])
        writer.writerow([str(n), *values])
    return out.getvalue()
