"""The sign-up-to-token journey in a real browser (headless Chromium, driven by Playwright) against the real server
over HTTPS: sign up, confirm through the mail's .eml file, sign in, create a token in the applications area, use it
on the deposit API, revoke it, and see it refused. Every page on the way is checked with axe-core (npm, see
package.json): no violation of serious or critical impact."""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from helpers.http import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--ignore-certificate-errors"]
AXE = Path(ROOT) / "node_modules" / "axe-core" / "axe.min.js"
EMAIL = "researcher@example.org"
PASSWORD = "a long passphrase 4 tests"
PHONE = {"width": 375, "height": 812}


def _confirmation_link(live_server: dict, to: str, seconds: float = 60) -> str:
    """The link of the newest .eml file written for `to` under the server's INSTANCE_PATH/mail (sent by the
    server's mail thread right after the sign-up's commit)."""
    folder = Path(live_server["env"]["INSTANCE_PATH"]) / "mail"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in sorted(folder.glob("*.eml"), reverse=True) if folder.is_dir() else []:
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if to in str(message["To"]):
                part = message.get_body(("plain",))
                assert part is not None
                links = re.findall(r"https://\S+/account/confirm/\S+", str(part.get_content()))  # type: ignore[attr-defined]
                if links:
                    return links[-1]
        time.sleep(0.2)
    raise AssertionError(f"no confirmation mail to {to} in {folder}")


def _check_accessibility(page: Any, what: str) -> None:
    """Run axe-core on the page: no serious or critical violation (the others are named in the message); and the
    page fits the screen's width."""
    # Evaluated rather than added as a <script>: the pages' Content-Security-Policy refuses inline scripts, rightly.
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    result = page.evaluate("async () => await window.axe.run(document)")
    violations = [
        {"id": v["id"], "impact": v["impact"], "help": v["help"],
         "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result["violations"]
    ]
    serious = [v for v in violations if v["impact"] in {"serious", "critical"}]
    assert not serious, f"{what} ({page.url}): " + json.dumps(violations, indent=1)
    # The journey runs on a phone-sized screen: nothing may need sideways scrolling of the page itself.
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{what} ({page.url}) is {width} px wide"


def _api(live_server: dict) -> requests.Session:
    http = requests.Session()
    http.verify = live_server["cert"]
    http.trust_env = False  # a CA bundle named in the environment must not replace the server certificate
    return http


def _wait_until_answering(live_server: dict, seconds: float = 120) -> None:
    """The workers boot slowly on a busy machine: wait for an answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            _api(live_server).get(live_server["url"] + "/api/", timeout=30)
            return
        except requests.RequestException:
            time.sleep(0.2)


def test_sign_up_to_token_in_a_browser(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("chromium is not installed (apt-get install chromium)")
    assert AXE.is_file(), "axe-core is missing: run `npm ci` in the project's root"
    base = live_server["url"]
    api = _api(live_server)
    _wait_until_answering(live_server)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(ignore_https_errors=True, viewport=PHONE).new_page()
            page.set_default_timeout(30_000)

            # Sign up; the confirmation link arrives as an .eml file.
            page.goto(base + "/signup/")
            _check_accessibility(page, "sign-up page")
            page.fill('input[name="email"]', EMAIL)
            page.fill('input[name="password"]', PASSWORD)
            page.fill('input[name="password_again"]', PASSWORD)
            page.press('input[name="password_again"]', "Enter")
            page.wait_for_url(re.compile(r"/account/check-mail/"))
            _check_accessibility(page, "after sign-up")

            page.goto(_confirmation_link(live_server, EMAIL))
            _check_accessibility(page, "confirmation")
            assert "confirmed" in page.content().lower()

            # Sign in, coming back to the applications area.
            page.goto(base + "/account/settings/applications/")
            assert "/login/" in page.url
            _check_accessibility(page, "sign-in page")
            page.fill('input[name="email"]', EMAIL)
            page.fill('input[name="password"]', PASSWORD)
            page.press('input[name="password"]', "Enter")
            page.wait_for_url("**/account/settings/applications/")
            _check_accessibility(page, "applications area")

            # A token needs a name: the form comes back with the error tied to the field.
            with page.expect_navigation():
                page.get_by_role("button", name="Create the token").click()
            name = page.get_by_label("Name")
            assert name.get_attribute("aria-invalid") == "true"
            assert "Give the token a name." in page.locator("#name-error").inner_text()
            _check_accessibility(page, "token form with an error")

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
            _check_accessibility(page, "new token")

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
            row.get_by_role("button", name=re.compile("^Revoke")).click()
            page.wait_for_url("**/account/settings/applications/")
            assert "revoked" in page.locator(".notice").inner_text()
            _check_accessibility(page, "after revoking")
        finally:
            browser.close()
    refused = api.post(base + "/api/deposit/depositions", json={}, headers=bearer, timeout=30)
    assert refused.status_code == 401
