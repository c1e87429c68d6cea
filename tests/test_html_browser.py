"""The HTML report in a real browser: charts render, nothing loads, no injected script runs.

Drives Debian's chromium through Playwright (never `playwright install`, which
downloads a browser build). Skipped when either is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.report.html.render import render_html, write_html
from pytest_qualbench.report.model import Report
from tests.html_sample import HOSTILE_QUERY, report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "no chromium on PATH: `apt-get install chromium` to run the browser test",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (the [test] extra has it)"
)

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            args=CHROMIUM_FLAGS,
            headless=True,
            viewport={"width": 1100, "height": 900},
        )
        yield context
        context.close()


class OpenedPage:
    """A report page opened in the browser, with every request and console message it made."""

    def __init__(self, context: Any, path: Path) -> None:
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page = context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.on("pageerror", lambda error: self.console.append(str(error)))
        # Anything but the file itself is aborted, so a leak fails fast instead of hanging.
        self.page.route("**/*", self._only_the_file)
        self.url = path.as_uri()
        self.page.goto(self.url, wait_until="load")

    def _only_the_file(self, route: Any) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()


@pytest.fixture
def open_report(browser_context: Any, tmp_path: Path) -> Iterator[Callable[..., OpenedPage]]:
    opened: list[OpenedPage] = []

    def open_(*reports: Report) -> OpenedPage:
        path = tmp_path / f"report-{len(opened)}.html"
        write_html(path, render_html(list(reports)))
        opened.append(OpenedPage(browser_context, path))
        return opened[-1]

    yield open_
    for page in opened:
        page.page.close()


def assert_charts_drawn(
    opened: OpenedPage, section: str, size: tuple[int, int], count: int
) -> None:
    """`count` SVG charts in the section, each `size` on screen with at least one visible mark."""
    svgs = opened.page.locator(f"#{section} figure.chart > svg")
    assert svgs.count() == count
    for index in range(count):
        svg = svgs.nth(index)
        box = svg.bounding_box()
        assert box is not None
        assert (box["width"], box["height"]) == size
        marks = svg.locator(".series rect, .series path, .series circle")
        drawn = [marks.nth(i).bounding_box() for i in range(marks.count())]
        assert any(mark is not None and mark["width"] * mark["height"] > 0 for mark in drawn)


def test_injected_script_does_not_run_and_shows_as_text(
    open_report: Callable[..., OpenedPage],
) -> None:
    opened = open_report(report(hostile=True))
    assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.page.locator("#case-md_001_q2 .query").inner_text() == HOSTILE_QUERY
    assert opened.page.locator("#case-md_001_q2 b").count() == 0
    assert opened.page.locator("#case-md_001_q2 img").count() == 0


def test_single_run_charts_render(open_report: Callable[..., OpenedPage]) -> None:
    opened = open_report(report(rankers=True))
    assert_charts_drawn(opened, "content-types", (470, 300), 6)
    assert_charts_drawn(opened, "ranks", (960, 380), 1)
    assert_charts_drawn(opened, "negatives", (470, 300), 1)
    assert_charts_drawn(opened, "rankers", (960, 380), 1)


def test_series_charts_render_and_no_request_leaves_the_page(
    open_report: Callable[..., OpenedPage],
) -> None:
    opened = open_report(report(level=0.7), report(level=0.8), report(level=0.9, rankers=True))
    assert_charts_drawn(opened, "content-types", (470, 300), 6)
    assert_charts_drawn(opened, "ranks", (960, 380), 1)
    assert_charts_drawn(opened, "trend", (960, 380), 1)
    assert opened.requests == [opened.url]
    # A blocked load or script would show as a Content-Security-Policy console error.
    assert opened.console == []
