"""The documentation's relative links lead somewhere: every `[text](target)` of README.md and
docs/**/*.md outside code (fenced blocks and `code spans`) names a file or folder that exists,
relative to the page, and an `#anchor` names a heading of the page it points to (GitHub's
slugs). Links with a scheme (https:, mailto:) are not followed: no network here. And the
README stays a front door: at most 300 lines, the reference being the guide in docs/guide/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.doc_commands import FENCE, doc_files
from tests.helpers import ROOT

README_MAX_LINES = 300
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+).+?\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def prose_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks, code spans blanked."""
    inside: str | None = None
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence and (inside is None or fence.group(1) == inside):
            inside = fence.group(1) if inside is None else None
        elif inside is None:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def links(markdown: str) -> Iterator[tuple[int, str]]:
    """(line number, target) of every inline link and image outside code."""
    for number, line in prose_lines(markdown):
        for match in LINK.finditer(line):
            yield number, match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks → hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings (a repeated one gets -1, -2, … as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    inside: str | None = None
    for line in markdown.splitlines():
        fence = FENCE.match(line)
        if fence and (inside is None or fence.group(1) == inside):
            inside = fence.group(1) if inside is None else None
            continue
        heading = HEADING.match(line) if inside is None else None
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path, root: Path) -> list[str]:
    """The links of one page that lead nowhere, as `page:line: target (why)`."""
    problems = []
    text = page.read_text()
    for number, target in links(text):
        if SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(root)}:{number}: {target}"
        if not dest.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            problems.append(f"{where} (no heading with that anchor)")
        elif anchor and dest.suffix != ".md":
            problems.append(f"{where} (an anchor into a file that is not markdown)")
    return problems


def test_every_relative_link_of_the_documentation_leads_somewhere() -> None:
    pages = [ROOT / "README.md", *doc_files(ROOT)]
    assert ROOT / "docs" / "guide" / "README.md" in pages
    problems = [problem for page in pages for problem in broken_links(page, ROOT)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): the reference belongs "
        "in the guide, docs/guide/")
    text = "\n".join(lines)
    assert "## Quick start" in text and "./scripts/quickstart" in text and "./scripts/test" in text
    assert "(docs/guide/README.md)" in text


def test_the_guide_index_links_every_guide_page() -> None:
    guide = ROOT / "docs" / "guide"
    linked = {target.partition("#")[0] for _, target in links((guide / "README.md").read_text())}
    pages = {p.name for p in guide.glob("*.md")} - {"README.md"}
    assert pages <= linked, f"guide pages the index does not link: {sorted(pages - linked)}"


def test_links_outside_code_are_found_and_checked(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# B page\n\n## Two words: `x`\n\n## Two words: x\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# A\n\n[b](docs/b.md) and [anchor](docs/b.md#two-words-x-1) and [self](#a)\n"
        "![img](docs/missing.png) [web](https://example.invalid/x) `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n"
        "[bad anchor](docs/b.md#three-words) [gone](docs/gone.md \"title\")\n")
    assert [target for _, target in links(page.read_text())] == [
        "docs/b.md", "docs/b.md#two-words-x-1", "#a", "docs/missing.png",
        "https://example.invalid/x", "docs/b.md#three-words", "docs/gone.md"]
    assert broken_links(page, tmp_path) == [
        "README.md:4: docs/missing.png (no such file)",
        "README.md:8: docs/b.md#three-words (no heading with that anchor)",
        "README.md:8: docs/gone.md (no such file)",
    ]


def test_slugs_are_githubs() -> None:
    assert slug("Module builds (`--module-repo`)") == "module-builds---module-repo"
    assert slug("Rate sweeps: latency vs throughput, and the knee") == (
        "rate-sweeps-latency-vs-throughput-and-the-knee")
    assert slug("Pub/sub definitions") == "pubsub-definitions"
    assert anchors("# X\n## Y\n```\n## Z\n```\n## Y\n") == {"x", "y", "y-1"}
