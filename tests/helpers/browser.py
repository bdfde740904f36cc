"""What the browser tests share: headless Debian Chromium driven by Playwright against the live server, the
axe-core check every page gets, and screenshots at desktop and phone width for a reviewer to look at.

    with browser_session(live_server) as (browser, page):
        page.goto(live_server["url"] + "/search")
        check_page(page, "search page")          # axe-core: no serious/critical violation; fits the screen
        screenshot(page, "search")               # test-screenshots/search-desktop.png and search-phone.png

Screenshots go to test-screenshots/ in the project's root (SCREENSHOT_DIR overrides; git ignores it).

A missing Chromium or axe-core fails the test with the command that installs it (`bash scripts/test.sh` installs
both); `BROWSER_TESTS=skip` opts out of the browser tests, which are then skipped and counted as such."""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from helpers.http import ROOT, wait_until_serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--ignore-certificate-errors"]
AXE = Path(ROOT) / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR") or Path(ROOT) / "test-screenshots")
# Pages checked with axe-core in this process; tests/conftest.py reports the count in the run's summary.
checks_done = 0


def api_session(live_server: dict) -> requests.Session:
    """A `requests` session that trusts the live server's certificate (and nothing named in the environment)."""
    http = requests.Session()
    http.verify = live_server["cert"]
    http.trust_env = False
    return http


def wait_until_answering(live_server: dict) -> None:
    wait_until_serving(live_server["url"], live_server["cert"])


@contextmanager
def browser_session(live_server: dict, viewport: dict | None = None) -> Iterator[tuple[Any, Any]]:
    """A Chromium browser and one page in a fresh context (its own cookies). Skipped only when the person opted
    out (BROWSER_TESTS=skip); a missing Chromium or axe-core fails with the command that installs it."""
    if os.environ.get("BROWSER_TESTS") == "skip":
        pytest.skip("browser tests opted out (BROWSER_TESTS=skip)")
    from playwright import sync_api  # a test dependency ('.[test]')

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail("chromium is not installed: apt-get install chromium (or BROWSER_TESTS=skip to opt out)")
    if not AXE.is_file():
        pytest.fail("axe-core is missing: run `npm ci` in the project's root (or BROWSER_TESTS=skip to opt out)")
    wait_until_answering(live_server)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(ignore_https_errors=True, viewport=viewport or DESKTOP).new_page()
            page.set_default_timeout(30_000)
            # Playwright turns on its interception of file choosers when a page gets its first listener, by a
            # message it does not wait for: a key pressed at once after `expect_file_chooser()` can beat it, and a
            # chooser that opens unintercepted is never reported. Listening from the start closes that race.
            page.on("filechooser", lambda _chooser: None)
            yield browser, page
        finally:
            browser.close()


def check_page(page: Any, what: str, width: int | None = None) -> None:
    """axe-core on the page: no violation of serious or critical impact (the others are named in the message); and
    nothing needs sideways scrolling at the page's width."""
    global checks_done
    # Evaluated rather than added as a <script>: the pages' Content-Security-Policy refuses inline scripts, rightly.
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    result = page.evaluate("async () => await window.axe.run(document)")
    violations = [{"id": v["id"], "impact": v["impact"], "help": v["help"],
                   "nodes": [n["target"] for n in v["nodes"]][:5]} for v in result["violations"]]
    serious = [v for v in violations if v["impact"] in {"serious", "critical"}]
    assert not serious, f"{what} ({page.url}): " + json.dumps(violations, indent=1)
    limit = width or page.viewport_size["width"]
    scrolled = page.evaluate("() => document.documentElement.scrollWidth")
    assert scrolled <= limit, f"{what} ({page.url}) is {scrolled} px wide on a {limit} px screen"
    checks_done += 1


def screenshot(page: Any, name: str) -> None:
    """Full-page screenshots at desktop and phone width (test-screenshots/<name>-desktop.png, -phone.png), checking
    the phone width fits; the page's own size is restored afterwards."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
    scrolled = page.evaluate("() => document.documentElement.scrollWidth")
    assert scrolled <= PHONE["width"], f"{name} ({page.url}) is {scrolled} px wide on a phone"
    page.set_viewport_size(before)


def check_and_photograph(page: Any, what: str, name: str) -> None:
    """`check_page` then `screenshot`: a page of a journey checked with axe-core and photographed."""
    check_page(page, what)
    screenshot(page, name)


def confirmation_link(live_server: dict, to: str, seconds: float = 60) -> str:
    """The confirmation link of the newest mail to `to`: the live server writes each mail as an .eml file under
    INSTANCE_PATH/mail, from its mail thread, right after the sign-up's commit."""
    folder = Path(live_server["env"]["INSTANCE_PATH"]) / "mail"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in sorted(folder.glob("*.eml"), reverse=True) if folder.is_dir() else []:
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            part = message.get_body(("plain",)) if to in str(message["To"]) else None
            found = re.findall(r"https://\S+/account/confirm/\S+", str(part.get_content())) if part else []  # type: ignore[attr-defined]
            if found:
                return found[-1]
        time.sleep(0.2)
    raise AssertionError(f"no confirmation mail to {to} in {folder}")


def sign_up_and_in(page: Any, live_server: dict, address: str, password: str, next_path: str) -> None:
    """Sign up as `address`, confirm through the mail, open `next_path` as a guest (which must send the browser to
    sign in), sign in there and come back to `next_path`. Use a fresh address per run: on PostgreSQL the live
    server shares the test database, which keeps earlier runs' users."""
    base = live_server["url"]
    page.goto(base + "/signup/")
    page.fill('input[name="email"]', address)
    page.fill('input[name="password"]', password)
    page.fill('input[name="password_again"]', password)
    page.press('input[name="password_again"]', "Enter")
    page.wait_for_url(re.compile(r"/account/check-mail/"))
    page.goto(confirmation_link(live_server, address))
    check_page(page, "address confirmation page")
    screenshot(page, "confirm-link")
    page.get_by_role("button", name="Confirm my address").click()  # the link's page: the button confirms
    page.wait_for_url(re.compile(r"/login/"))
    page.goto(base + next_path)
    assert "/login/" in page.url, f"{next_path} did not ask a guest to sign in"
    page.fill('input[name="email"]', address)
    page.fill('input[name="password"]', password)
    page.press('input[name="password"]', "Enter")
    page.wait_for_url("**" + next_path)


def add_row(page: Any, group: str, values: dict[str, str] | None = None) -> None:
    """Press a repeatable group's add button on the deposit form: the row appears in place (no page load) and takes
    the focus; then fill it with `values` when given (see `fill_row`)."""
    before = page.url
    rows = page.locator(f'[data-group="{group}"] [data-rows] > [data-row]')
    count = rows.count()
    page.locator(f'[data-group="{group}"] [data-add-row]').click()
    assert rows.count() == count + 1 and page.url == before
    assert page.evaluate("() => document.activeElement.name").startswith(f"{group}-")
    if values:
        fill_row(page, group, values)


def fill_row(page: Any, group: str, values: dict[str, str]) -> None:
    """Fill the last row of `group` on the deposit form: sub-field name -> value ("" for a one-field row; select
    boxes by value)."""
    row = page.locator(f'[data-group="{group}"] [data-rows] > [data-row]').last
    for sub, value in values.items():
        control = row.locator(f'[name$="-{sub}"]' if sub else "input")
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)


def create_community(page: Any, identifier: str, title: str, description: str) -> None:
    """On /communities/new (signed in), create a community; the browser lands on its page."""
    page.get_by_label("Identifier").fill(identifier)
    page.get_by_label("Title").fill(title)
    page.get_by_label("Description").fill(description)
    with page.expect_navigation():
        page.get_by_role("button", name="Create community").click()
    assert page.url.endswith(f"/communities/{identifier}/")
