"""Links and section citations in the docs and the code, against the docs as they are.

Docs move: a section is renamed, history leaves a page for another. A link to a
file that is gone, an anchor no heading makes, or a citation such as
`docs/engine.md, "Trigram layer"` naming a section the file no longer has, goes
stale silently; these tests fail with the file, the line and what it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PROSE_FILES = (
    ROOT / "README.md",
    ROOT / "ARCHITECTURE.md",
    ROOT / "CHANGELOG.md",
    *sorted(DOCS.glob("*.md")),
)
CODE_FILES = tuple(
    sorted(
        path
        for directory in ("pytest_qualbench", "benchmarks", "tests")
        for pattern in ("*.py", "*.c")
        for path in (ROOT / directory).rglob(pattern)
    )
)
# docs/performance.md holds today's figures only (issue 56); history has its own page.
PERFORMANCE_PAGE_MAX_LINES = 400

# `docs/engine.md, "Trigram layer"`, `docs/engine.md ("Trigram layer")`, also across a
# line break inside a comment (` * `, `# `).
CITATION = re.compile(r'docs/(?P<doc>[\w.-]+\.md)[,\s][\s*#/(]*"(?P<section>[^"]+)"')
LINE_BREAK = re.compile(r"\s*\n[\s*#/]*")
# `[text](target)` with a relative target: a file, maybe with `#anchor`, or `#anchor`.
MARKDOWN_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^(`{3,}|~{3,})")


@dataclass(frozen=True)
class Reference:
    """What one place in a file names: a doc and a section, or a link target."""

    path: Path
    line: int
    target: str

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def headings(path: Path) -> list[str]:
    """The Markdown headings of `path`, outside fenced code."""
    found, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.append(line.lstrip("#").strip())
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def citations() -> Iterator[tuple[Reference, str]]:
    """Every cited doc section in the prose and the code: where, the doc, the section."""
    for path in (*PROSE_FILES, *CODE_FILES):
        text = path.read_text(encoding="utf-8")
        for match in CITATION.finditer(text):
            section = LINE_BREAK.sub(" ", match["section"]).strip()
            yield Reference(path, line_of(text, match.start()), match["doc"]), section


def markdown_links() -> Iterator[Reference]:
    """Every relative link target in the Markdown files."""
    for path in PROSE_FILES:
        text = path.read_text(encoding="utf-8")
        for match in MARKDOWN_LINK.finditer(text):
            target = match["target"]
            if not re.match(r"[a-z]+:", target):
                yield Reference(path, line_of(text, match.start()), target)


def test_the_performance_page_stays_one_page() -> None:
    lines = len((DOCS / "performance.md").read_text(encoding="utf-8").splitlines())
    assert lines <= PERFORMANCE_PAGE_MAX_LINES, (
        f"docs/performance.md has {lines} lines (at most {PERFORMANCE_PAGE_MAX_LINES}): "
        "move what is history to docs/performance-history.md"
    )


def test_every_cited_section_is_a_heading_of_its_doc() -> None:
    stale = []
    for reference, section in citations():
        doc = DOCS / reference.target
        names = headings(doc) if doc.is_file() else []
        if not any(name.startswith(section) for name in names):
            stale.append(f'{reference.where()}: docs/{reference.target} has no "{section}"')
    assert not stale, "\n".join(stale)


def test_every_markdown_link_reaches_its_file_and_heading() -> None:
    broken = []
    for reference in markdown_links():
        file_part, _, fragment = reference.target.partition("#")
        target = (reference.path.parent / file_part).resolve() if file_part else reference.path
        if not target.exists():
            broken.append(f"{reference.where()}: {reference.target}: no such file")
        elif fragment and fragment not in {anchor(name) for name in headings(target)}:
            broken.append(f"{reference.where()}: {reference.target}: no such heading")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Cases judged by entry (`relevant`)", "cases-judged-by-entry-relevant"),
        ("Where to set min_similarity", "where-to-set-min_similarity"),
        ("The plugin's cost, and pytest's", "the-plugins-cost-and-pytests"),
    ],
)
def test_anchor_follows_githubs_rule(heading: str, expected: str) -> None:
    assert anchor(heading) == expected
