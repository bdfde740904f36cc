"""The search page in a real browser (headless Chromium, Playwright, axe-core; desktop and phone width): stemmed
words highlighted and escaped, a query the parser refuses searched as plain words, "did you mean", facet counts
that equal the results a click gives, the publication-year histogram and its from-to form without JavaScript,
indented subtypes, page numbers, the page jump and the page-size choice (docs/search.md)."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import DESKTOP, PHONE, browser_session, check_page, screenshot

from .test_browser_discover import _publish, _token

TAG = uuid.uuid4().hex[:8]


def _total(page) -> int:  # type: ignore[no-untyped-def]
    return int(re.match(r"([\d,]+) results?", page.locator("#results-heading").inner_text()).group(1).replace(",", ""))


def test_search_words_counts_years_and_pages_in_a_browser(live_server):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    author = _token(live_server, "words@example.org")
    _publish(live_server, author, title=f"Soil moisture in the Alps {TAG}", keywords=[TAG, "soil"],
             publication_date="1995-06-01", description="<p>Daily <b>moisture</b> readings.</p>")
    _publish(live_server, author, title=f"<script>alert(1)</script> moisture probes {TAG}", keywords=[TAG],
             upload_type="software", publication_date="2021-03-03")
    _publish(live_server, author, title=f"Running water of Zürich {TAG}", keywords=[TAG], access_right="closed",
             publication_date="2005-02-02")
    _publish(live_server, author, title=f"Soil carbon {TAG}", keywords=[TAG], upload_type="publication",
             publication_type="article", publication_date="2021-04-04")

    with browser_session(live_server) as (browser, page):
        # Stemmed words, highlighted; a title with markup is shown as text.
        page.goto(base + f"/search?q=moistures AND keywords:{TAG}")
        assert _total(page) == 2
        marks = page.locator(".result mark").all_inner_texts()
        assert marks and {m.lower() for m in marks} == {"moisture"}
        assert page.get_by_text(f"<script>alert(1)</script> moisture probes {TAG}").is_visible()
        check_page(page, "search page with highlighted words")
        screenshot(page, "search-highlight")

        # A query the parser refuses: its words are searched, and the page says so.
        page.goto(base + f"/search?q=soil: {TAG}")
        assert page.get_by_role("status").filter(has_text="could not be read as query syntax").is_visible()
        assert _total(page) == 4  # soil OR the tag
        assert page.locator("#search-q").input_value() == f"soil: {TAG}"
        check_page(page, "search page after a plain-word fallback")
        screenshot(page, "search-fallback")

        # Did you mean: a misspelled word, nothing found; the suggestion finds the record.
        page.goto(base + f"/search?q=moistrue&keywords={TAG}")
        assert _total(page) == 0
        with page.expect_navigation():
            page.locator(".suggestion").get_by_role("link", name="moisture").click()
        assert _total(page) == 2
        check_page(page, "search page after did you mean")
        page.goto(base + f"/search?q=moistrue&keywords={TAG}")
        screenshot(page, "search-did-you-mean")

        # Multi-select counts: each count is the number of results its click gives.
        page.goto(base + f"/search?keywords={TAG}&access_right=open")
        assert _total(page) == 3
        for label in ("Software", "Publication", "Dataset"):
            entry = page.locator(".facets .facet-link").filter(has_text=re.compile(rf"^\s*{label}\s+\d+"))
            count = int(entry.locator(".facet-count").inner_text())
            with page.expect_navigation():
                entry.click()
            assert _total(page) == count, label
            page.go_back()
        # Subtypes are drawn inside their type: indented.
        page.goto(base + f"/search?keywords={TAG}")
        parent = page.locator(".facet-link").filter(has_text=re.compile(r"^\s*Publication\s+1")).bounding_box()
        child = page.locator(".facet-children .facet-link").filter(has_text="Journal article").bounding_box()
        assert child["x"] >= parent["x"] + 10
        check_page(page, "search page with facets")
        screenshot(page, "search-facets")

        # The year histogram: a bar per year, a click filters; the from-to form narrows to a range.
        with page.expect_navigation():
            page.locator(".year-bars").get_by_role("link", name="2021: 2 records").click()
        assert _total(page) == 2 and "publication_date=2021--2021" in page.url
        page.goto(base + f"/search?keywords={TAG}")
        page.fill("#year-from", "1990")
        page.fill("#year-to", "2010")
        with page.expect_navigation():
            page.locator(".year-range").get_by_role("button", name="Apply").click()
        assert _total(page) == 2
        assert page.get_by_role("link", name=re.compile("Publication year: 1990--2010")).is_visible()
        check_page(page, "search page with a year range")
        screenshot(page, "search-years")

        # Page numbers, the page jump and the page size.
        page.goto(base + f"/search?keywords={TAG}&sort=publication_date&size=1")
        assert page.locator("#search-size").input_value() == "1" and _total(page) == 4
        assert [t.strip() for t in page.locator(".page-numbers a").all_text_contents()] == [
            "Page 1", "Page 2", "Page 3", "Page 4"]
        page.fill("#page-jump", "3")
        with page.expect_navigation():
            page.locator(".page-jump").get_by_role("button", name="Go").click()
        assert "page=3" in page.url
        assert page.locator('.page-numbers a[aria-current="page"]').inner_text().endswith("3")
        assert page.locator(".result-title a").all_inner_texts() == [f"<script>alert(1)</script> moisture probes {TAG}"]
        check_page(page, "search page 3")
        page.set_viewport_size(PHONE)
        check_page(page, "search page 3 on a phone")
        page.set_viewport_size(DESKTOP)
        screenshot(page, "search-pages")
        page.select_option("#search-size", "20")
        with page.expect_navigation():
            page.locator(".search-options").get_by_role("button", name="Apply").click()
        assert "size=20" in page.url and "page=" not in page.url and len(page.locator(".result").all()) == 4

        # Without JavaScript the range form and the page jump are plain forms: they work the same.
        plain = browser.new_context(ignore_https_errors=True, java_script_enabled=False, viewport=PHONE).new_page()
        plain.set_default_timeout(30_000)
        plain.goto(base + f"/search?keywords={TAG}")
        plain.fill("#year-from", "2006")
        with plain.expect_navigation():
            plain.locator(".year-range").get_by_role("button", name="Apply").click()
        assert _total(plain) == 2 and "year_from=2006" in plain.url  # (axe-core needs JavaScript: checked above)
