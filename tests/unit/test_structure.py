"""Counters of the code's structure that fail CI when they grow (issue 36, item 5).

Each counter is a function over a list of files, run on the real tree (src/, tests/,
benchmarks/) and on a deliberately bad sample it must catch:

- ``getattr(args, …)`` in src/: a command's options read by a name the parser may not have
  defined; at most GETATTR_ARGS_CEILING (a ratchet whose target is 0).
- functions longer than MAX_FUNCTION_LINES lines (``def`` to the body's last line): none,
  but those on LONG_FUNCTIONS_PENDING (cli/ and pipeline/ only, each no longer than listed).
- raw JSON dict types (``JsonObject``, ``JsonValue``, ``dict``/``Mapping`` of ``str`` to
  ``Any`` or ``object``) in src/ only in the modules that read or write JSON documents
  (JSON_BOUNDARY); other modules pass typed values (results/records.py's and row.py's
  TypedDicts, dataclasses). PENDING and CLI_PIPELINE_PENDING list those not typed yet.

A ratchet entry that no longer offends fails too, naming itself: delete it, so the lists
only shrink.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_files(*folders: str) -> list[Path]:
    """The .py files under ``folders`` (relative to the repository root), sorted."""
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _name(path: Path) -> str:
    """A file as the messages name it: relative to the repository root when it is inside."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


@functools.cache
def _parse(path: Path) -> ast.Module:
    """The file's syntax tree (each file parsed once per session: three counters read src/)."""
    return ast.parse(path.read_text(), filename=str(path))


# --- getattr(args, …) ------------------------------------------------------------------------

# Must be 0: a command reads the options its parser defines as args.NAME, never
# getattr(args, NAME, default) (which hides a misspelt or missing option). Never raise it.
GETATTR_ARGS_CEILING = 0


def getattr_args_uses(files: Iterable[Path]) -> list[str]:
    """``path:line`` of every ``getattr(args, …)`` call."""
    found = []
    for path in files:
        lines = sorted(node.lineno for node in ast.walk(_parse(path))
                       if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                       and node.func.id == "getattr" and node.args
                       and isinstance(node.args[0], ast.Name) and node.args[0].id == "args")
        found += [f"{_name(path)}:{line}" for line in lines]
    return found


def test_getattr_args_stays_under_its_ceiling() -> None:
    found = getattr_args_uses(python_files("src"))
    assert len(found) <= GETATTR_ARGS_CEILING, (
        f"{len(found)} getattr(args, …) in src/, over the ceiling of {GETATTR_ARGS_CEILING} "
        "(target 0: read a parser-defined option as args.NAME):\n  " + "\n  ".join(found))


def test_getattr_args_counter_catches_a_use(tmp_path: Path) -> None:
    bad = tmp_path / "command.py"
    bad.write_text("def run(args):\n    return getattr(args, 'seed', None)\n"
                   "def other(opts):\n    return getattr(opts, 'seed', None)\n")
    assert getattr_args_uses([bad]) == [f"{bad}:2"]


# --- long functions --------------------------------------------------------------------------

MAX_FUNCTION_LINES = 60

# Ratchet: functions of cli/ and pipeline/ over the limit, with their length today. The
# cli/pipeline restructuring splits them; delete each entry when it is done. None may grow,
# and no function elsewhere may join them.
LONG_FUNCTIONS_PENDING: dict[str, int] = {}


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from _functions(node, f"{name}.")
        else:
            yield from _functions(node, prefix)


def long_functions(files: Iterable[Path], limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """``path::qualified.name`` → lines, from ``def`` to the body's last line (decorators
    not counted), of every function over ``limit`` lines."""
    found = {}
    for path in files:
        for name, node in _functions(_parse(path)):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found[f"{_name(path)}::{name}"] = lines
    return found


def test_no_function_is_over_the_limit() -> None:
    found = long_functions(python_files("src", "tests", "benchmarks"))
    new = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS_PENDING}
    grown = {k: n for k, n in found.items()
             if k in LONG_FUNCTIONS_PENDING and n > LONG_FUNCTIONS_PENDING[k]}
    stale = sorted(set(LONG_FUNCTIONS_PENDING) - set(found))
    problems = ([f"{k}: {n} lines (split it into helpers)" for k, n in sorted(new.items())]
                + [f"{k}: grew to {n} lines (listed at {LONG_FUNCTIONS_PENDING[k]}: "
                   "split it, don't grow it)" for k, n in sorted(grown.items())]
                + [f"{k}: LONG_FUNCTIONS_PENDING lists it but it is gone or within the "
                   "limit now: delete the entry" for k in stale])
    assert not problems, (f"functions over {MAX_FUNCTION_LINES} lines:\n  "
                          + "\n  ".join(problems))


def test_the_long_function_ratchet_is_only_for_cli_and_pipeline() -> None:
    outside = [k for k in LONG_FUNCTIONS_PENDING
               if not k.startswith(("src/kvperf/cli/", "src/kvperf/pipeline/"))]
    assert not outside, f"LONG_FUNCTIONS_PENDING may hold only cli/ and pipeline/: {outside}"


def _function(name: str, body_lines: int, indent: str = "") -> str:
    return f"{indent}def {name}():\n" + "".join(
        f"{indent}    x{i} = {i}\n" for i in range(body_lines))


def test_long_function_counter_catches_one(tmp_path: Path) -> None:
    bad = tmp_path / "long.py"
    bad.write_text(
        _function("at_limit", 59)  # def + 59 lines: 60, allowed
        + "@staticmethod\n" + _function("decorated", 59)  # decorators do not count
        + _function("over", 60)
        + "class C:\n" + _function("method", 60, "    ")
        + _function("outer", 0) + _function("inner", 60, "    ") + "    return inner\n")
    assert long_functions([bad]) == {f"{bad}::over": 61, f"{bad}::C.method": 61,
                                     f"{bad}::outer": 63, f"{bad}::outer.inner": 61}


# --- raw JSON dict types ---------------------------------------------------------------------

# What reads as "a JSON object, shape unchecked": core/jsontypes.py's names, and a str-keyed
# dict or mapping of Any or object (typing's spellings too).
RAW_JSON_NAMES = frozenset({"JsonObject", "JsonValue"})
RAW_JSON_CONTAINERS = frozenset({"dict", "Dict", "Mapping", "MutableMapping"})
RAW_JSON_VALUES = frozenset({"Any", "object"})


def _last_name(node: ast.expr) -> str | None:
    """``x`` of a Name ``x`` or an Attribute ``….x`` (``typing.Any``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_raw_json(node: ast.AST) -> bool:
    if isinstance(node, ast.Name | ast.Attribute):
        return _last_name(node) in RAW_JSON_NAMES
    if isinstance(node, ast.Subscript) and _last_name(node.value) in RAW_JSON_CONTAINERS:
        key_value = node.slice
        return (isinstance(key_value, ast.Tuple) and len(key_value.elts) == 2
                and _last_name(key_value.elts[0]) == "str"
                and _last_name(key_value.elts[1]) in RAW_JSON_VALUES)
    return False


def _quoted_annotations(tree: ast.AST) -> Iterator[tuple[int, ast.expr]]:
    """(line, parsed expression) of each quoted annotation (``x: "dict[str, Any]"``)."""
    roots: list[ast.expr | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            roots.append(node.returns)
    for root in filter(None, roots):
        for part in ast.walk(root):
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                try:
                    yield part.lineno, ast.parse(part.value, mode="eval").body
                except SyntaxError:
                    continue


def raw_json_uses(files: Iterable[Path]) -> dict[str, list[str]]:
    """Per module that spells a raw JSON dict type anywhere (annotations, aliases, casts,
    TypedDict fields): ``line: source`` of each line that does."""
    found: dict[str, list[str]] = {}
    for path in files:
        tree = _parse(path)
        hits = {node.lineno for node in ast.walk(tree)
                if isinstance(node, ast.expr) and _is_raw_json(node)}
        hits |= {line for line, quoted in _quoted_annotations(tree)
                 if any(_is_raw_json(node) for node in ast.walk(quoted))}
        if hits:
            lines = path.read_text().splitlines()
            found[_name(path)] = [f"{n}: {lines[n - 1].strip()}" for n in sorted(hits)]
    return found


# The modules that read or write JSON (or YAML) documents: they call json.load(s)/dump(s),
# check a decoded document's values, or build a document to be written. Only they may
# spell a raw JSON dict type; each says why it is one.
JSON_BOUNDARY = {
    "src/kvperf/core/jsontypes.py": "defines JsonObject and JsonValue",
    "src/kvperf/core/identity.py": "stable_id hashes the canonical JSON (json.dumps) of params",
    "src/kvperf/config/loader.py": "reads kvperf's JSON config files and checks their values",
    "src/kvperf/config/scenarios.py": "reads module scenario files (json.load) into specs",
    "src/kvperf/config/datasets.py": "checks a scenario's dataset specs; writes JSON documents",
    "src/kvperf/config/profiling.py": "checks a config's decoded profiling_sets and overrides",
    "src/kvperf/definitions/parse.py": "checks benchmark definitions' decoded YAML documents",
    "src/kvperf/definitions/memtier_options.py": "reads kvload memtier --options-json",
    "src/kvperf/clients/manifest.py": "reads a client harness's manifest.json",
    "src/kvperf/clients/schema.py": "loads the harness documents' JSON schemas",
    "src/kvperf/clients/result.py": "parses a harness's JSON result document",
    "src/kvperf/clients/workload.py": "builds the workload.json spec a harness reads",
    "src/kvperf/driver/kvload.py": "reads kvload's JSON report",
    "src/kvperf/driver/memtier.py": "reads memtier's JSON output",
    "src/kvperf/driver/pubsub.py": "reads kvload pubsub's JSON report",
    "src/kvperf/driver/benchmark_run.py": "builds and reads redisbench-admin's result document",
    "src/kvperf/driver/trace_replay.py": "reads kvload trace-info's JSON",
    "src/kvperf/sourcebuild/module_builder.py": "reads and writes a module build's JSON marker",
    "src/kvperf/results/records.py": "metrics.json's sub-records: env and latency stay open",
    "src/kvperf/results/row.py": "the metrics.json row: upgrades decoded rows, reads fields",
    "src/kvperf/results/failover.py": "reads kvload's decoded JSON timeline",
    "src/kvperf/store/records.py": "a row's canonical JSON (row_hash, config_set) and row column",
    "src/kvperf/store/track.py": "the tracking jobs' JSON (as_json, json.loads)",
    "src/kvperf/analysis/bisect_log.py": "bisect.json, written and read back",
    "src/kvperf/analysis/comparison.py": "decodes the store's canonical JSON config_set",
    "src/kvperf/analysis/trace_stats.py": "the document `trace stats --json` writes",
    "src/kvperf/report/model.py": "report --json's document",
    "src/kvperf/report/doctor.py": "doctor --json's document",
    "src/kvperf/report/harnesses.py": "the JSON document of `kvperf clients --json`",
    "src/kvperf/report/gates.py": "gates.json",
    "src/kvperf/report/regressions.py": "regressions --json's document",
    "src/kvperf/report/history_page.py": "history --json's document",
    "src/kvperf/pipeline/run/faults.py": "reads kvload.json's timeline for the failover record",
    "src/kvperf/pipeline/run/client_work.py": "writes a harness's workload.json",
}

# Ratchet: modules outside cli/ and pipeline/ that pass raw JSON dicts around without reading
# or writing a document, not typed yet (each a change beyond this one's size). Delete an
# entry when its module is typed.
PENDING = {
    # Measurement.extra: the load tools' extras by name (client_saturated, histograms,
    # pubsub, kvload's client record); a TypedDict needs row.py's client record to stop
    # picking keys by run-time name, and pipeline/run's readers of it.
    "src/kvperf/driver/base.py",
    # host_facts() is the row env's host part; a HostFacts TypedDict does not spread into
    # an Env (dict[str, JsonValue]) in the four pipeline env builders (run/prepare.py,
    # run/modules.py, run/trace_work.py, definitions/definitions.py).
    "src/kvperf/server/host.py",
    # add_to_summary reads store/records.trial_values' columns; a TrialValues TypedDict of
    # the trials table's columns would type both.
    "src/kvperf/store/writer.py",
    # reads the row's failover record (row.py: dict[str, Any]); a FailoverRecord TypedDict
    # needs results/failover.py and pipeline/run/faults.py's record() to return it.
    "src/kvperf/report/failover.py",
}

# Ratchet: the same in cli/ and pipeline/, for the cli/pipeline restructuring to type.
CLI_PIPELINE_PENDING = {
    # the load tools' decoded reports, from driver/ run() to driver/ parsers
    "src/kvperf/pipeline/run/definition_work.py",
    # the row env's ``module`` part (module_env: JsonObject)
    "src/kvperf/pipeline/module_bisect.py",
    # server_wrapping(): ServerGroup keyword arguments as dict[str, object]
    "src/kvperf/pipeline/run/instructions.py",
    # a scenario trial's identity (dict[str, object]) for stable_id
    "src/kvperf/pipeline/run/modules.py",
}


def test_raw_json_types_only_in_json_boundary_modules() -> None:
    found = raw_json_uses(python_files("src"))
    listed = set(JSON_BOUNDARY) | PENDING | CLI_PIPELINE_PENDING
    outside = {k: v for k, v in found.items() if k not in listed}
    stale = sorted((set(PENDING) | CLI_PIPELINE_PENDING | set(JSON_BOUNDARY)) - set(found))
    problems = [f"{module}: spells a raw JSON dict type but reads or writes no JSON document "
                "(type it: results/records.py's or row.py's TypedDicts, a dataclass, the "
                "narrowest honest type; a real JSON boundary goes on JSON_BOUNDARY with its "
                "reason):\n      " + "\n      ".join(lines)
                for module, lines in sorted(outside.items())]
    problems += [f"{module}: listed, but spells no raw JSON dict type now: delete its entry"
                 for module in stale]
    assert not problems, "\n  ".join(["raw JSON dict types out of place:", *problems])


def test_the_json_lists_are_disjoint_and_in_their_folders() -> None:
    in_cli_pipeline = ("src/kvperf/cli/", "src/kvperf/pipeline/")
    assert not PENDING & set(JSON_BOUNDARY), PENDING & set(JSON_BOUNDARY)
    assert not CLI_PIPELINE_PENDING & set(JSON_BOUNDARY)
    assert not [m for m in PENDING if m.startswith(in_cli_pipeline)], PENDING
    assert all(m.startswith(in_cli_pipeline) for m in CLI_PIPELINE_PENDING), (
        CLI_PIPELINE_PENDING)


@pytest.mark.parametrize("spelling", [
    "x: JsonObject = {}", "x: dict[str, Any] = {}", "x: dict[str, object] = {}",
    "x: typing.Dict[str, typing.Any] = {}", "x: 'Mapping[str, object] | None' = None",
    "Alias = Mapping[str, Any]", "y = cast(jsontypes.JsonValue, x)",
    "def f(a: list[dict[str, Any]]) -> None: ...", "def f() -> 'JsonValue': ...",
    "class R(TypedDict):\n    env: dict[str, JsonValue]",
])
def test_raw_json_counter_catches_each_spelling(tmp_path: Path, spelling: str) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(f"import typing\n\n{spelling}\n")
    last = len(spelling.splitlines()) + 2  # after the import and a blank line
    assert raw_json_uses([bad]) == {str(bad): [f"{last}: {spelling.splitlines()[-1].strip()}"]}


def test_raw_json_counter_passes_typed_spellings(tmp_path: Path) -> None:
    fine = tmp_path / "fine.py"
    fine.write_text("x: dict[str, int] = {}\ny: Mapping[str, ParamValue] = {}\n"
                    "z: dict[Any, object] = {}\ndef f(a: 'dict[str, float]') -> Row: ...\n")
    assert raw_json_uses([fine]) == {}
