"""A whole deposit with the keyboard alone, in a real browser (headless Chromium, Playwright), at phone width: start
an upload, fill the required fields (a typo in the ORCID saved and corrected), choose a file, review and publish.
Every control is reached with Tab and used with the keys a person would press; the mouse is never used."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import PHONE, browser_session, check_page, screenshot, sign_up_and_in

EMAIL = f"keyboard-{uuid.uuid4().hex[:8]}@example.org"  # fresh: PostgreSQL keeps earlier runs' users
PASSWORD = "a long passphrase 4 keys"
MOST_TABS = 400  # more than the stops of the longest page: a control never reached fails the test


def _focused(page) -> str:  # type: ignore[no-untyped-def]
    """The focused element, as `id` or its accessible text."""
    return str(page.evaluate("() => document.activeElement.id || document.activeElement.textContent.trim()"))


def tab_to(page, target: str) -> None:  # type: ignore[no-untyped-def]
    """Press Tab until the element whose id (or text) is `target` has the focus."""
    for _ in range(MOST_TABS):
        if _focused(page) == target:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target!r} is never reached with Tab on {page.url}")


def type_into(page, target: str, text: str) -> None:  # type: ignore[no-untyped-def]
    tab_to(page, target)
    page.keyboard.press("Control+A")
    page.keyboard.type(text)


def press(page, target: str, key: str = "Enter") -> None:  # type: ignore[no-untyped-def]
    """Tab to `target` and press `key`, waiting for the page it loads."""
    tab_to(page, target)
    with page.expect_navigation():
        page.keyboard.press(key)


def test_a_keyboard_only_deposit(live_server, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    data = tmp_path / "readings.csv"
    data.write_bytes(b"day,reading\n1,4.2\n")
    with browser_session(live_server, PHONE) as (_browser, page):
        sign_up_and_in(page, live_server, EMAIL, PASSWORD, "/deposit/new")
        page.keyboard.press("Tab")  # from the page itself, as after loading it
        press(page, "Start a new upload")
        assert re.search(r"/deposit/\d+$", page.url)
        dep_url = page.url

        tab_to(page, "upload_type")
        page.keyboard.type("Dataset")  # a closed select takes the option whose name is typed
        assert page.locator("#upload_type").input_value() == "dataset"
        type_into(page, "title", "Readings by keyboard")
        type_into(page, "creators-0-name", "Doe, Jane")
        type_into(page, "creators-0-orcid", "0000-0002-1825-009")  # one digit short
        type_into(page, "description", "Daily readings.")
        type_into(page, "language", "English")
        press(page, "Save draft")  # the visible button: the hidden first one is out of the Tab order

        # The typo is kept beside its error; the summary has the focus and its link leads to the field.
        assert _focused(page) == "error-summary"
        check_page(page, "keyboard deposit with a typo")
        screenshot(page, "keyboard-deposit-typo")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.getAttribute('href')") == "#creators-0-orcid"
        page.keyboard.press("Enter")
        assert _focused(page) == "creators-0-orcid"
        page.keyboard.press("End")
        page.keyboard.type("7")
        press(page, "Save draft")
        expect(page.locator(".notice.success")).to_contain_text("Draft saved.")

        # The file: the file input opens the chooser with the space bar.
        upload = f"upload-{dep_url.rsplit('/', 1)[1]}"
        tab_to(page, upload)
        # A file chooser opens only for the page that has the browser's focus and a focused input.
        page.bring_to_front()
        expect(page.locator(f"#{upload}")).to_be_focused()
        with page.expect_file_chooser() as chooser:
            page.keyboard.press(" ")
        chooser.value.set_files(str(data))
        page.wait_for_function("() => document.querySelector('[data-files-status]').textContent === 'Uploaded 1 file.'")

        press(page, "Review and publish")
        assert page.url == dep_url + "/publish"
        expect(page.locator("main")).to_contain_text("readings.csv")
        expect(page.locator("main")).to_contain_text("Creative Commons Zero")  # the dataset's default license
        check_page(page, "keyboard review")
        screenshot(page, "keyboard-deposit-review")
        press(page, "Publish")
        assert page.url == dep_url
        expect(page.locator(".badge")).to_have_text("Published")
        saved = page.request.get(dep_url.replace("/deposit/", "/api/deposit/depositions/")).json()["metadata"]
        assert saved["creators"] == [{"name": "Doe, Jane", "orcid": "0000-0002-1825-0097"}]
        assert saved["language"] == "eng" and saved["license"] == "cc-zero"
