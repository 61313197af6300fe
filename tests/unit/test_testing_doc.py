"""docs/TESTING.md's generated table lists every integration test file, and the generator
reads a JUnit report the way pytest writes it."""

from __future__ import annotations

from pathlib import Path

from tests.testing_doc import BEGIN, DOC, END, ROOT, describe, merged, rewrite, timings


def test_every_integration_file_has_a_row() -> None:
    text = DOC.read_text()
    assert BEGIN in text and END in text
    rows = text.split(BEGIN, 1)[1].split(END, 1)[0]
    missing = [p.name for p in sorted((ROOT / "tests" / "integration").glob("test_*.py"))
               if f"| `{p.name}` |" not in rows]
    assert not missing, ("integration test files missing from docs/TESTING.md "
                         f"(run tests/testing_doc.py on a fresh junit.xml): {missing}")


def test_timings_sum_per_file_and_fold_classes(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.integration.test_a" name="test_x" time="1.5"/>'
        '<testcase classname="tests.integration.test_a" name="test_y[p]" time="2.0"/>'
        '<testcase classname="tests.unit.cli.test_b.TestThing" name="test_z" time="0.25"/>'
        '</testsuite></testsuites>')
    found = timings(junit)
    assert found["tests/integration/test_a.py"].tests == 2
    assert found["tests/integration/test_a.py"].seconds == 3.5
    assert found["tests/unit/cli/test_b.py"].seconds == 0.25


def test_lanes_sum_and_are_named_by_their_reports(tmp_path: Path) -> None:
    for lane, seconds in (("parallel", "4.0"), ("alone", "6.0")):
        (tmp_path / f"junit-{lane}.xml").write_text(
            '<testsuites><testsuite name="pytest">'
            f'<testcase classname="tests.integration.test_a" name="test_{lane}" '
            f'time="{seconds}"/></testsuite></testsuites>')
    found = merged([tmp_path / "junit-parallel.xml", tmp_path / "junit-alone.xml"])
    assert found["tests/integration/test_a.py"].tests == 2
    assert found["tests/integration/test_a.py"].seconds == 10.0
    assert found["tests/integration/test_a.py"].lanes == ("parallel", "alone")


def test_describe_takes_the_docstring_and_shared_fixtures(tmp_path: Path) -> None:
    source = tmp_path / "test_x.py"
    source.write_text('"""Proves a | b.\n\nDetails."""\nimport pytest\n\n'
                      '@pytest.fixture(scope="module")\ndef server(): ...\n\n'
                      'def test_a(server, valkey_repo, tmp_path): ...\n')
    about, fixtures = describe(source, {"valkey_repo", "corpus"})
    assert about == "Proves a \\| b."
    assert fixtures == ["server", "valkey_repo"]


def test_rewrite_replaces_only_the_table(tmp_path: Path) -> None:
    doc = tmp_path / "T.md"
    doc.write_text(f"intro\n{BEGIN}\nold\n{END}\noutro\n")
    assert rewrite(doc, "new") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
