"""analysis/envdiff.py: the differing facts of two sides, warnings for the known ones."""

from __future__ import annotations

from typing import Any

from kvperf.analysis.envdiff import (
    changed_facts,
    env_diff,
    flatten,
    history_changes,
    rows_env_diff,
)

HOST = {"host": "m1", "kernel": "Linux 6.1", "cpu": "EPYC", "governor": "performance",
        "smt": "on", "turbo": "off", "mitigations": "0 mitigated", "tool": "kvload 0.3"}


def _row(**env: Any) -> dict[str, Any]:
    return {"env": {**HOST, **env}, "tool_version": "0.3"}


def test_same_environments_have_no_difference() -> None:
    diff = rows_env_diff({"A": [_row(), _row()], "B": [_row()]})
    assert diff.sides == ("A", "B") and not diff and diff.facts == ()


def test_a_governor_change_is_listed_and_warned() -> None:
    diff = rows_env_diff({"A": [_row()], "B": [_row(governor="powersave")]})
    (fact,) = diff.facts
    assert (fact.fact, fact.values, fact.varies) == ("governor", ("performance", "powersave"),
                                                     False)
    assert fact.warning and "governor" in fact.warning and diff.warnings == (fact,)


def test_a_build_flag_is_listed_nested_and_warned() -> None:
    a = _row(build={"make_args": ["BUILD_TLS=yes"], "compiler": "gcc 12"})
    b = _row(build={"make_args": ["BUILD_TLS=yes", "OPTIMIZATION=-O0"], "compiler": "gcc 12"})
    (fact,) = rows_env_diff({"A": [a], "B": [b]}).facts
    assert fact.fact == "build.make_args"
    assert fact.values == ("BUILD_TLS=yes", "BUILD_TLS=yes OPTIMIZATION=-O0")
    assert fact.warning is not None


def test_facts_that_differ_by_design_are_left_out() -> None:
    diff = rows_env_diff({"A": [_row(ref="v1", commit_sha="aa", server_binary="/a")],
                          "B": [_row(ref="v2", commit_sha="bb", server_binary="/b")]})
    assert not diff


def test_a_fact_that_varies_within_a_side_shows_every_value() -> None:
    diff = rows_env_diff({"A": [_row(), _row(turbo="on")], "B": [_row(), _row()]})
    (fact,) = diff.facts
    assert fact.values == ("off | on", "off") and fact.varies and fact.warning


def test_kernel_is_a_note_and_a_missing_fact_shows_a_dash() -> None:
    diff = env_diff({"A": [{"kernel": "6.1", "x": "1"}], "B": [{"kernel": "6.2"}]})
    kernel, extra = diff.facts
    assert kernel.note and not kernel.warning
    assert extra.values == ("1", "–") and extra.warning is None


def test_a_fact_one_side_did_not_record_is_not_warned_about() -> None:
    old = _row(build={"make_args": "BUILD_TLS=yes"})
    new = _row(build={"make_args": "BUILD_TLS=yes", "compiler": "gcc 12"})
    (fact,) = rows_env_diff({"A": [old], "B": [new]}).facts
    assert fact.fact == "build.compiler" and fact.values == ("–", "gcc 12")
    assert fact.warning is None and fact.note and "not recorded" in fact.note


def test_three_sides_any_difference_counts() -> None:
    diff = env_diff({"A": [{"cpu": "x"}], "B": [{"cpu": "x"}], "C": [{"cpu": "y"}]})
    assert [f.values for f in diff.facts] == [("x", "x", "y")]


def test_flatten_and_history_changes_ignore_new_facts() -> None:
    assert flatten({"a": {"b": 1, "c": None}, "l": [1, 2]}) == {"a.b": "1", "l": "1 2"}
    before, after = {"governor": ("performance",)}, {"governor": ("powersave",), "smt": ("on",)}
    assert [f.fact for f in changed_facts(before, after)] == ["governor"]
    assert changed_facts(before, {"smt": ("on",), **before}) == ()


def test_history_changes_mark_the_first_point_of_a_new_environment() -> None:
    quiet = {**HOST, "commit_sha": "a"}
    points = [[quiet], [{**quiet, "commit_sha": "b"}], [], [{**quiet, "governor": "powersave"}],
              [{**quiet, "governor": "powersave", "smt": "off"}]]
    first, second = history_changes(points)
    assert first.index == 3 and [f.fact for f in first.facts] == ["governor"]
    assert first.label == "environment changed: governor performance → powersave"
    assert second.index == 4 and second.facts[0].warning
