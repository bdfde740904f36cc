"""The footer of every page, the front page's included, links the full public exports; the live server's background
worker writes the first one on its own (EXPORT_INTERVAL's default), and the link leads to its list."""

from __future__ import annotations

import time

import pytest
from helpers.browser import api_session, browser_session, check_page, screenshot


def test_the_front_page_footer_links_the_exports_the_worker_wrote(live_server) -> None:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    http = api_session(live_server)
    deadline = time.monotonic() + 30
    listed = http.get(base + "/api/exports/").json()["exports"]
    while not listed and time.monotonic() < deadline:  # the worker's first pass comes within seconds of start
        time.sleep(0.5)
        listed = http.get(base + "/api/exports/").json()["exports"]
    assert listed, "the background worker wrote no export"
    with browser_session(live_server) as (_browser, page):
        page.goto(base + "/")
        link = page.locator("footer.site").get_by_role("link", name="Full exports")
        assert link.is_visible()
        check_page(page, "front page")
        screenshot(page, "front-exports-link")
        answer = page.request.get(base + link.get_attribute("href"))
        assert answer.status == 200 and answer.json()["exports"][0]["id"] == listed[0]["id"]
