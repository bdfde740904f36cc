"""The site header in a real browser (headless Chromium, Playwright) against the real server over HTTPS: on a phone
the links fold behind a menu button that opens them with and without JavaScript, and the header's "Sign in" comes
back to the page it was pressed on. Pages are checked with axe-core and photographed at desktop and phone width."""

from __future__ import annotations

import uuid

import pytest
from helpers.browser import DESKTOP, PHONE, browser_session, check_page, screenshot, sign_up_and_in

EMAIL = f"header-{uuid.uuid4().hex[:8]}@example.org"  # fresh per run: PostgreSQL keeps earlier runs' users
PASSWORD = "a long passphrase 4 tests"
# Brand and menu button on one line, the search box on the next: two rows of controls at most.
PHONE_HEADER_MAX_PX = 120

pytestmark = pytest.mark.e2e


def test_the_phone_menu_opens_and_closes_with_javascript(live_server):
    with browser_session(live_server, viewport=PHONE) as (_browser, page):
        page.goto(live_server["url"] + "/communities/")
        header = page.locator("header.site")
        assert header.bounding_box()["height"] <= PHONE_HEADER_MAX_PX
        links = page.get_by_role("navigation", name="Site")
        button = page.get_by_role("button", name="Menu")
        assert not links.is_visible() and button.get_attribute("aria-expanded") == "false"
        button.click()
        assert links.is_visible() and button.get_attribute("aria-expanded") == "true"
        assert links.get_by_role("link", name="Sign in", exact=True).is_visible()
        check_page(page, "phone menu open")
        page.screenshot(path="test-screenshots/header-menu-open-phone.png")
        page.keyboard.press("Escape")
        assert not links.is_visible() and button.get_attribute("aria-expanded") == "false"
        page.set_viewport_size(DESKTOP)  # a wide screen shows the links and no button
        assert links.is_visible() and not page.locator("header.site .menu-button").is_visible()


def test_the_phone_menu_opens_without_javascript(live_server):
    with browser_session(live_server, viewport=PHONE) as (browser, _page):
        page = browser.new_context(ignore_https_errors=True, viewport=PHONE, java_script_enabled=False).new_page()
        page.goto(live_server["url"] + "/communities/")
        links = page.locator("#site-menu")
        assert not links.is_visible()
        page.get_by_role("link", name="Menu").click()
        assert page.url.endswith("#site-menu") and links.is_visible()
        page.get_by_role("link", name="Close the menu").click()
        assert not links.is_visible()


def test_sign_in_from_the_header_comes_back_to_the_page(live_server):
    base = live_server["url"]
    with browser_session(live_server) as (_browser, page):
        sign_up_and_in(page, live_server, EMAIL, PASSWORD, "/deposit")
        page.get_by_role("button", name="Sign out").click()
        page.goto(base + "/communities/?q=soil")
        page.get_by_role("navigation", name="Site").get_by_role("link", name="Sign in", exact=True).click()
        check_page(page, "sign-in page from the header")
        screenshot(page, "header-sign-in")
        page.fill('input[name="email"]', EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/communities/?q=soil")
        # Signing in from the sign-in page itself goes on to My uploads.
        page.get_by_role("button", name="Sign out").click()
        page.goto(base + "/login/")
        page.fill('input[name="email"]', EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/deposit")
