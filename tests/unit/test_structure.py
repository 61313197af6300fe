"""Counters of the code's structure that fail CI when they grow (issue 36, item 5).

Each counter is a function over a list of files, run on the real tree (src/, tests/,
benchmarks/) and on a deliberately bad sample it must catch:

- ``getattr(args, …)`` in src/: a command's options read by a name the parser may not have
  defined; at most GETATTR_ARGS_CEILING (a ratchet whose target is 0).
- functions longer than MAX_FUNCTION_LINES lines (``def`` to the body's last line): none,
  but those on LONG_FUNCTIONS_PENDING (cli/ and pipeline/ only, each no longer than listed).
- raw JSON dict types (RAW_JSON_TYPES) only in the modules that read or write JSON documents
  (JSON_BOUNDARY); other modules pass typed values (results/records.py's and row.py's
  TypedDicts, dataclasses). PENDING and CLI_PIPELINE_PENDING list those not typed yet.

A ratchet entry that no longer offends fails too, naming itself: delete it, so the lists
only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def python_files(*folders: str) -> list[Path]:
    """The .py files under ``folders`` (relative to the repository root), sorted."""
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _name(path: Path) -> str:
    """A file as the messages name it: relative to the repository root when it is inside."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


# --- getattr(args, …) ------------------------------------------------------------------------

# Must be 0: every option a command reads is one its parser defines (args.NAME, checked by
# mypy through the typed options), never getattr(args, NAME, default). Today's 10 are in
# cli/_module_sides.py and cli/_trace.py, being removed by the cli/pipeline restructuring;
# set this to 0 when that lands, and never raise it.
GETATTR_ARGS_CEILING = 10


def getattr_args_uses(files: Iterable[Path]) -> list[str]:
    """``path:line`` of every ``getattr(args, …)`` call."""
    found = []
    for path in files:
        for node in ast.walk(_parse(path)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "getattr" and node.args
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == "args"):
                found.append(f"{_name(path)}:{node.lineno}")
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
LONG_FUNCTIONS_PENDING = {
    "src/kvperf/cli/run.py::add_parser": 64,
}


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
