"""Finding records and curating a community in a real browser (headless Chromium, driven by Playwright) against the
real server over HTTPS: the front page, the search page with a facet click that filters, a bad query, the
communities list, a community's page, and its owner accepting a pending request on the curation page. Every page
is checked with axe-core (no serious or critical violation, nothing wider than the screen) and photographed at
desktop and phone width."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import pytest
from helpers.browser import (
    DESKTOP,
    PHONE,
    api_session,
    browser_session,
    check_page,
    create_community,
    screenshot,
    sign_up_and_in,
)
from helpers.http import ROOT

# Names of this run: a PostgreSQL test database may hold what earlier tests left, and the server shares it.
TAG = uuid.uuid4().hex[:8]
CURATOR = f"curator-{TAG}@example.org"
COMMUNITY = f"glaciology-{TAG}"
PASSWORD = "a long passphrase 4 tests"
API = "/api/deposit/depositions"


def _token(live_server: dict, email_address: str) -> str:
    """A token of a user of the live server's database, made the way an operator makes one."""
    made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "create_token.py"), "--email", email_address,
                           "--scopes", "deposit:write,deposit:actions"],
                          env=live_server["env"], cwd=ROOT, capture_output=True, text=True, check=True)
    return made.stdout.strip().splitlines()[-1]


def _publish(live_server: dict, token: str, **metadata: object) -> int:
    """Publish a record with one file through the API; its record id."""
    http = api_session(live_server)
    http.headers["Authorization"] = f"Bearer {token}"
    base = live_server["url"] + API
    body = {"title": "Untitled", "upload_type": "dataset", "description": "<p>Readings.</p>",
            "creators": [{"name": "Doe, Jane"}], **metadata}
    made = http.post(base, json={"metadata": body})
    assert made.status_code == 201, made.text
    dep = made.json()
    sent = http.post(f"{base}/{dep['id']}/files", files={"file": ("data.csv", b"a,b\n1,2\n")}, data={"name": "data.csv"})
    assert sent.status_code == 201, sent.text
    done = http.post(f"{base}/{dep['id']}/actions/publish")
    assert done.status_code == 202, done.text
    return int(done.json()["record_id"])


def _result_titles(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator(".result-title a").all_inner_texts()


def test_search_facets_and_community_curation_in_a_browser(live_server):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    author = _token(live_server, "author@example.org")
    _publish(live_server, author, title=f"Meltwater chemistry {TAG}", keywords=["glacier", "chemistry"],
             publication_date="2022-06-01")
    _publish(live_server, author, title=f"Melt model {TAG}", upload_type="software", keywords=["glacier"],
             description="<p>A <em>model</em> of melting ice sheets.</p>", publication_date="2023-02-01")

    with browser_session(live_server) as (_browser, page):
        page.goto(base + "/")
        assert page.locator("h1").inner_text()
        assert _result_titles(page)[:2] == [f"Melt model {TAG}", f"Meltwater chemistry {TAG}"]  # newest first
        assert page.get_by_role("link", name=re.compile(r"\d+\s+records")).is_visible()
        check_page(page, "front page")
        screenshot(page, "front")

        # Search from the front page's box, then narrow by a facet.
        page.fill("#front-q", f"melt* AND {TAG}")
        page.press("#front-q", "Enter")
        page.wait_for_url(re.compile(r"/search\?q=melt"))
        assert sorted(_result_titles(page)) == [f"Melt model {TAG}", f"Meltwater chemistry {TAG}"]
        check_page(page, "search page")
        screenshot(page, "search")
        with page.expect_navigation():
            page.locator(".facets").get_by_role("link", name=re.compile(r"^Software\s+1")).click()
        assert "type=software" in page.url and "q=melt" in page.url
        assert _result_titles(page) == [f"Melt model {TAG}"]
        selected = page.locator('.facets a[aria-current="true"]')
        assert re.search(r"Software.*remove filter", selected.inner_text(), re.DOTALL)
        check_page(page, "search page with a filter")
        screenshot(page, "search-filtered")
        # On a phone the facets start folded (search.js), so the results come first; they open on demand.
        page.set_viewport_size(PHONE)
        page.reload()
        facets = page.locator("details[data-facets]")
        assert facets.get_attribute("open") is None
        page.get_by_text("Narrow the results").click()
        assert facets.get_attribute("open") is not None
        check_page(page, "search page on a phone")
        page.set_viewport_size(DESKTOP)

        # A bad argument: the API's message on the page, with status 400 (a bad `q` is searched as plain words:
        # test_browser_search_words.py).
        answer = page.goto(base + "/search?q=melt&sort=nonsense")
        assert answer is not None and answer.status == 400
        assert page.get_by_role("alert").is_visible()
        assert page.locator("#search-q").input_value() == "melt"
        check_page(page, "search page with a bad argument")
        screenshot(page, "search-bad-query")

        # An address that is no page of the site: the site's error page, not an error object.
        answer = page.goto(base + "/record/abc")
        assert answer is not None and answer.status == 404
        assert page.locator("h1").inner_text() == "Not found"
        check_page(page, "unknown address")
        screenshot(page, "not-found")

        # A curator creates a community; a record asks to join it; the curator accepts it.
        sign_up_and_in(page, live_server, CURATOR, PASSWORD, "/communities/new")
        check_page(page, "new community form")
        screenshot(page, "community-new")
        create_community(page, COMMUNITY, f"Glaciology {TAG}", "<p>Ice, snow and <strong>meltwater</strong>.</p>")
        _publish(live_server, author, title="Ice core isotopes", keywords=["ice"], communities=[{"identifier": COMMUNITY}])

        page.goto(base + "/communities/?q=" + TAG)
        assert page.get_by_role("link", name=f"Glaciology {TAG}").is_visible()
        check_page(page, "communities list")
        screenshot(page, "communities")

        page.goto(base + f"/communities/{COMMUNITY}/curate")
        assert page.get_by_role("link", name="Ice core isotopes").is_visible()
        check_page(page, "curation page")
        screenshot(page, "community-curate")
        with page.expect_navigation():
            page.get_by_role("button", name="Accept").click()
        assert "accepted" in page.get_by_role("status").filter(has_text="accepted").inner_text()

        page.goto(base + f"/communities/{COMMUNITY}/")
        assert _result_titles(page) == ["Ice core isotopes"]
        assert page.locator(".facets").get_by_role("link", name=re.compile(r"^ice\s+1")).is_visible()
        check_page(page, "community page")
        screenshot(page, "community")

        page.goto(base + "/communities/nowhere/")
        assert page.locator("h1").inner_text() == "Not found"
        check_page(page, "unknown community")
