"""The self-contained HTML report: JSON report dicts in, one offline HTML page out.

The page is for a reviewer: headline metrics against their floors, charts per
content type, the rank distribution, the failures with their top results, the
rankers head-to-head and the trend over several runs. It makes no network
request and carries no script: charts are inline SVG drawn by pygal (its JS
and config script stripped), styles are inline CSS, and a Content-Security-
Policy forbids scripts and remote loads as a second line of defence. Every
piece of report text goes through Jinja2 autoescaping.

Jinja2 and pygal are the optional `[html]` extra; they are imported only when
a page is rendered, so `HtmlExtraMissing` can be caught by callers that merely
import this module.

`render_html` and `write_html` are the API (docs/html-report.md); the page's
records, its assembly, its charts and its rendering live in their own modules.
"""

from __future__ import annotations

from pytest_qualbench.report.html.model import HtmlExtraMissing, MixedDatasets
from pytest_qualbench.report.html.page import order_by_timestamp
from pytest_qualbench.report.html.render import render_html, write_html

__all__ = ["HtmlExtraMissing", "MixedDatasets", "order_by_timestamp", "render_html", "write_html"]
