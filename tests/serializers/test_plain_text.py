"""Descriptions as text (serializers.text.strip_html): what the formats, the page's <meta> and the search cards
derive from a description keeps its paragraphs, line breaks and list items apart."""

from __future__ import annotations

import pytest

from serializers.text import strip_html


@pytest.mark.parametrize(("given", "expected"), [
    ("<p>Collected in December 2023.</p><p>Columns: <b>site</b>, depth</p>",
     "Collected in December 2023.\n\nColumns: site, depth"),
    ("first<br>second<br/>third", "first\nsecond\nthird"),
    ("<p>Files:</p>\n<ul>\n  <li>one</li>\n  <li>two<ul><li>two a</li><li>two b</li></ul></li>\n</ul>after",
     "Files:\n\n- one\n- two\n  - two a\n  - two b\n\nafter"),
    ("<ol><li>x</li><li>y</li></ol>", "1. x\n2. y"),
    ("<table><tr><th>a</th><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>", "a b\nc d"),
    ("<pre>x = 1\n  y = 2</pre>", "x = 1\n  y = 2"),
    ("<!-- note -->spread  over\n lines &amp; spaces", "spread over lines & spaces"),
    ("plain text, no markup", "plain text, no markup"), ("", ""), (None, ""), ("  ", ""),
    ("<h2>Title</h2>text<p></p><p></p><p>more</p>", "Title\n\ntext\n\nmore"),
])  # fmt: skip
def test_paragraphs_lines_and_items_stay_apart(given: str | None, expected: str) -> None:
    assert strip_html(given) == expected
