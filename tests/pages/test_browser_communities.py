"""A community as people meet it, in a real browser (headless Chromium) against the real server over HTTPS: a new
community's page says what it gathers and how records join it, its owner uploads a logo (a refused file first),
the list counts each community's records and shows the logos, and a record's page names its communities by their
titles. Every page is checked with axe-core and photographed at
desktop and phone width."""

from __future__ import annotations

import io
import uuid

import pytest
from helpers.browser import browser_session, check_page, create_community, screenshot, sign_up_and_in
from helpers.http import token_session
from PIL import Image

TAG = uuid.uuid4().hex[:8]  # a PostgreSQL test database may hold what earlier tests left
COMMUNITY = f"dunes-{TAG}"
TITLE = f"Coastal dunes {TAG}"
PASSWORD = "a long passphrase 4 tests"


def test_empty_state_counts_and_titles(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    with browser_session(live_server) as (_browser, page):
        sign_up_and_in(page, live_server, f"curator-{TAG}@example.org", PASSWORD, "/communities/new")
        create_community(page, COMMUNITY, TITLE, "<p>Sand, wind and <strong>vegetation</strong> on coasts.</p>")
        empty = page.locator(".community-empty")
        sync_api.expect(empty).to_contain_text("No records yet")
        sync_api.expect(empty).to_contain_text("A record joins it when its depositor asks for it")
        assert empty.get_by_role("link", name="See the requests").is_visible()
        check_page(page, "empty community")
        screenshot(page, "community-empty")

        # The owner's logo: a file that is not an image is refused beside the field, then an image is shown.
        page.goto(f"{base}/communities/{COMMUNITY}/edit")
        page.locator("input#logo").set_input_files(
            files=[{"name": "notes.png", "mimeType": "image/png", "buffer": b"not an image"}])
        page.get_by_role("button", name="Upload the logo").click()
        sync_api.expect(page.locator("#logo-error")).to_contain_text("This file is not an image")
        check_page(page, "logo refused")
        screenshot(page, "community-logo-refused")
        image = io.BytesIO()
        Image.new("RGB", (600, 300), (200, 170, 90)).save(image, "JPEG")
        page.locator("input#logo").set_input_files(
            files=[{"name": "dunes.jpg", "mimeType": "image/jpeg", "buffer": image.getvalue()}])
        page.get_by_role("button", name="Upload the logo").click()
        sync_api.expect(page.get_by_role("status").filter(has_text="The logo has been saved.")).to_have_count(1)
        page.goto(f"{base}/communities/{COMMUNITY}/")
        logo = page.locator("img.community-logo")
        page.wait_for_function("() => document.querySelector('img.community-logo').naturalWidth === 240")
        assert logo.get_attribute("alt") == ""  # beside the title it names: decorative
        check_page(page, "community with its logo")
        screenshot(page, "community-logo")

        api = token_session(live_server, f"author-{TAG}@example.org")
        dep = api.post(f"{base}/api/deposit/depositions", timeout=30, json={"metadata": {
            "upload_type": "dataset", "title": "Dune heights", "description": "<p>Heights.</p>",
            "creators": [{"name": "Doe, Jane"}], "communities": [{"identifier": COMMUNITY}]}}).json()
        assert api.put(f"{dep['links']['bucket']}/heights.csv", data=b"a\n1\n", timeout=30).ok
        record = api.post(dep["links"]["publish"], timeout=30).json()
        api.close()

        page.goto(f"{base}/communities/{COMMUNITY}/curate")
        with page.expect_navigation():
            page.get_by_role("button", name="Accept").click()
        page.goto(f"{base}/communities/?q={TAG}")
        card = page.locator(".community-list li", has_text=TITLE)
        sync_api.expect(card.locator(".community-count")).to_have_text("1 record")
        page.wait_for_function("() => document.querySelector('img.community-logo-small').naturalWidth === 240")
        check_page(page, "communities list with counts")
        screenshot(page, "communities-counts")

        page.goto(f"{base}/communities/{COMMUNITY}/")
        sync_api.expect(page.locator(".community-empty")).to_have_count(0)
        sync_api.expect(page.locator(".result-title a")).to_have_text(["Dune heights"])

        page.goto(f"{base}/records/{record['id']}")
        section = page.locator("section[aria-labelledby=communities-heading]")
        sync_api.expect(section.get_by_role("link")).to_have_text([TITLE])
        check_page(page, "record naming its community")
