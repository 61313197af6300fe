"""The extraction of documented kvperf commands (tests/doc_commands.py)."""

from __future__ import annotations

from tests.doc_commands import (
    commands_in_line,
    commands_in_markdown,
    documented_commands,
    strip_comment,
)
from tests.helpers import ROOT

DOC = """\
# Title

kvperf run --not-in-a-block

```bash
kvperf run --dry-run                              # print the plan
pip install kvperf
cargo build --release
kvload --help
kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 \\
    --output report.md --fail-on-regression
# kvperf noise --runs 8 (a comment, not a command)
job=$(kvperf track claim --runner bench-1 --lease 7200)     # JSON, or `null`
kvperf run --commit $(git rev-parse HEAD)
time .venv/bin/kvperf run          # built-in config
export KVPERF_DB=postgresql://bench:secret@db.internal:5432/perf
kvperf-doctor --json
```

~~~
kvperf history --where 'command=SET # not a comment'
~~~
"""


def test_only_kvperf_commands_of_fenced_blocks_are_extracted() -> None:
    found = commands_in_markdown(DOC, "X.md")
    assert [c.text for c in found] == [
        "kvperf run --dry-run",
        "kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 --output report.md "
        "--fail-on-regression",
        "kvperf track claim --runner bench-1 --lease 7200",
        "kvperf run --commit $(git rev-parse HEAD)",
        ".venv/bin/kvperf run",
        "kvperf history --where 'command=SET # not a comment'",
    ]
    assert [c.source for c in found] == ["X.md:6", "X.md:10", "X.md:13", "X.md:14", "X.md:15",
                                         "X.md:21"]


def test_a_fence_closes_only_with_its_own_marker() -> None:
    text = "~~~\n```\nkvperf run\n~~~\nkvperf noise\n"
    assert [c.text for c in commands_in_markdown(text, "X.md")] == ["kvperf run"]


def test_comments_need_a_blank_before_the_hash_and_respect_quotes() -> None:
    assert strip_comment("kvperf run  # plan") == "kvperf run"
    assert strip_comment("kvperf run --label a#b") == "kvperf run --label a#b"
    assert strip_comment('kvperf run --label "x # y" # z') == 'kvperf run --label "x # y"'
    assert strip_comment("# only a comment") == ""


def test_substitutions_end_at_their_closing_parenthesis() -> None:
    assert commands_in_line('x=$(kvperf track claim --runner "$(hostname)") && echo') == [
        'kvperf track claim --runner "$(hostname)"']
    assert commands_in_line("echo kvperf run") == []
    assert commands_in_line("time kvperf run --dry-run") == ["kvperf run --dry-run"]


def test_commands_end_at_separators_and_keep_their_assignments() -> None:
    assert commands_in_line("cd x && KVPERF_QUICK=1 kvperf run --runs 2; echo done") == [
        "KVPERF_QUICK=1 kvperf run --runs 2"]
    assert commands_in_line("kvperf history --json | jq . || kvperf db migrate") == [
        "kvperf history --json", "kvperf db migrate"]
    assert commands_in_line("kvperf run --label 'a;b' & wait") == ["kvperf run --label 'a;b'"]
    assert commands_in_line("kvperf-doctor --json; mykvperf run") == []


def test_the_real_documentation_has_commands_in_every_file() -> None:
    found = documented_commands(ROOT)
    files = {c.source.split(":")[0] for c in found}
    assert files >= {"README.md", "docs/PERFORMANCE.md", "docs/guide/run.md"}, files
    assert all("kvperf" in c.text.split()[0] for c in found)
