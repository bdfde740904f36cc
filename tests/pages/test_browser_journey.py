"""The sign-up-to-token journey in a real browser (headless Chromium, driven by Playwright) against the real server
over HTTPS: sign up, confirm through the mail's .eml file, sign in, create a token in the applications area, use it
on the deposit API, revoke it, and see it refused. Every page on the way is checked with axe-core (npm, see
package.json): no violation of serious or critical impact."""

from __future__ import annotations

import re

import pytest
from helpers.browser import PHONE, api_session, browser_session, check_page, confirmation_link, screenshot

EMAIL = "researcher@example.org"
PASSWORD = "a long passphrase 4 tests"


def test_sign_up_to_token_in_a_browser(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    api = api_session(live_server)
    with browser_session(live_server, viewport=PHONE) as (_browser, page):
        # Sign up; the confirmation link arrives as an .eml file.
        page.goto(base + "/signup/")
        check_page(page, "sign-up page")
        screenshot(page, "account-signup")
        page.fill('input[name="email"]', EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.fill('input[name="password_again"]', PASSWORD)
        page.press('input[name="password_again"]', "Enter")
        page.wait_for_url(re.compile(r"/account/check-mail/"))
        check_page(page, "after sign-up")
        screenshot(page, "account-check-mail")

        page.goto(confirmation_link(live_server, EMAIL))
        check_page(page, "confirmation page")  # the link only opens a page: the button confirms
        page.get_by_role("button", name="Confirm my address").click()
        page.wait_for_url(re.compile(r"/login/"))
        check_page(page, "confirmation")
        screenshot(page, "account-confirmed")
        assert "confirmed" in page.content().lower()

        # Sign in, coming back to the applications area.
        page.goto(base + "/account/settings/applications/")
        assert "/login/" in page.url
        check_page(page, "sign-in page")
        screenshot(page, "account-signin")
        page.fill('input[name="email"]', EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/account/settings/applications/")
        check_page(page, "applications area")
        screenshot(page, "account-applications")

        # A token needs a name: the form comes back with the error tied to the field.
        with page.expect_navigation():
            page.get_by_role("button", name="Create the token").click()
        name = page.get_by_label("Name")
        assert name.get_attribute("aria-invalid") == "true"
        assert "Give the token a name." in page.locator("#name-error").inner_text()
        check_page(page, "token form with an error")
        screenshot(page, "account-applications-error")

        # Create a token with deposit:write; it is shown once.
        name.fill("browser journey")
        page.get_by_role("checkbox", name=re.compile("deposit:write")).check()
        with page.expect_navigation():
            page.get_by_role("button", name="Create the token").click()
        token = page.locator(".secret").inner_text().strip()
        assert len(token) >= 43
        # The copy button is shown by static/copy.js (the page allows no inline script) and says what it did.
        copy = page.get_by_role("button", name="Copy the token")
        sync_api.expect(copy).to_be_visible()
        copy.click()
        sync_api.expect(page.locator('[data-copy-status="new-token"]')).to_have_text(re.compile("Copied|Selected"))
        assert "curl -H" in page.locator("pre.example").inner_text()
        check_page(page, "new token")
        screenshot(page, "account-new-token")
        # Reloading the page creates no second token and no longer shows the secret.
        page.reload()
        assert page.locator(".secret").count() == 0

        # The token works on the deposit API, with deposit:write only.
        bearer = {"Authorization": f"Bearer {token}"}
        created = api.post(base + "/api/deposit/depositions", json={}, headers=bearer, timeout=30)
        assert created.status_code == 201, created.text
        listed = api.get(base + "/api/tokens/", headers=bearer, timeout=30).json()
        assert [(t["name"], t["scopes"]) for t in listed] == [("browser journey", ["deposit:write"])]

        # Revoke it in the browser: the list says so and shows when it was last used.
        page.goto(base + "/account/settings/applications/")
        row = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name="browser journey"))
        assert "never" not in row.inner_text()
        row.get_by_role("link", name=re.compile("^Revoke")).click()
        page.wait_for_url("**/revoke")
        check_page(page, "revocation to confirm")
        screenshot(page, "account-token-revoke-confirm")
        page.get_by_role("button", name="Revoke the token").click()
        page.wait_for_url("**/account/settings/applications/")
        assert "revoked" in page.locator(".notice").inner_text()
        check_page(page, "after revoking")
        screenshot(page, "account-token-revoked")

        # The other account pages: settings and the access requests (none yet).
        for path, shot in (("/account/settings/", "account-settings"), ("/account/requests/", "account-requests")):
            page.goto(base + path)
            check_page(page, path)
            screenshot(page, shot)
    refused = api.post(base + "/api/deposit/depositions", json={}, headers=bearer, timeout=30)
    assert refused.status_code == 401
