"""The callgrind parser on real profiles agrees with callgrind_annotate --inclusive=yes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kvperf.results.callgrind import parse
from tests.helpers import require_binary

pytestmark = pytest.mark.integration

_ANNOTATE_LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S+?):(.+?)(?:\s\[[^\]]*\])?$")


def annotate_inclusive(path: Path) -> dict[str, int]:
    """Inclusive Ir per function name from callgrind_annotate (names unique in its output).

    Recursion levels (``f'2``, callgrind's --separate-recs) are left out: callgrind_annotate
    adds a function's calls to itself to its inclusive cost again, kvperf does not.
    """
    done = subprocess.run([require_binary("callgrind_annotate"), "--inclusive=yes",
                           "--threshold=100", str(path)], capture_output=True, text=True,
                          check=True)
    seen: dict[str, list[int]] = {}
    for line in done.stdout.splitlines():
        match = _ANNOTATE_LINE.match(line)
        if match and match.group(2) != "PROGRAM" and "'" not in match.group(3):
            seen.setdefault(match.group(3), []).append(int(match.group(1).replace(",", "")))
    return {name: costs[0] for name, costs in seen.items() if len(costs) == 1}


def assert_matches_annotate(path: Path, names: tuple[str, ...] = ()) -> None:
    """Our inclusive costs equal callgrind_annotate's (for ``names`` only, when given).

    callgrind_annotate sums the cost of the *calls into* a function; kvperf sums what ran
    inside it. The two agree unless the profile was switched on or dumped while a call was
    in progress (serverCron's allocator statistics, in a server profile), so server profiles
    are compared on the command path, whose calls all complete inside the measure stage.
    """
    profile = parse(path.read_text())
    expected = annotate_inclusive(path)
    if names:
        expected = {n: c for n, c in expected.items() if n in names}
        assert len(expected) == len(names), (names, expected)
    else:
        assert len(expected) > 20, expected
    mine = {name: cost.inclusive for name, cost in profile.functions.items()}
    wrong = {n: (mine.get(n), c) for n, c in expected.items() if mine.get(n) != c}
    assert not wrong, f"parser vs callgrind_annotate differ: {dict(list(wrong.items())[:10])}"
    assert profile.total == sum(c.self_cost for c in profile.functions.values())


def test_parser_matches_callgrind_annotate_on_a_real_program(tmp_path: Path) -> None:
    out = tmp_path / "callgrind.out.ls"
    subprocess.run([require_binary("valgrind"), "--tool=callgrind", f"--callgrind-out-file={out}",
                    "ls", "-l", "/"], capture_output=True, check=True, timeout=120)
    assert_matches_annotate(out)
