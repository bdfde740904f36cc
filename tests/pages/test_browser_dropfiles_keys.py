"""The file area of the deposit form in a real browser, continued (tests/pages/test_browser_dropfiles.py; a module
of its own, so that its sign-ups stay within the sign-in rate limit of one live server): a file too large for the
quota refused next to it before a byte is sent; the area used with the keyboard alone through the plain file
picker; and the same area without JavaScript."""

from __future__ import annotations

import hashlib
import re

import pytest
from helpers.browser import PHONE, SCREENSHOTS, browser_session, check_page, screenshot
from helpers.dropfiles import drop, listed_names, server_files, signed_in_draft, wait_for_status


def test_too_large_for_the_quota_is_said_next_to_the_file(live_server):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with browser_session(live_server) as (_browser, page):
        signed_in_draft(page, live_server, "quota")
        # The room the page was given is what the bucket's quota leaves; a file past it is refused before sending.
        room = int(page.locator("[data-files]").get_attribute("data-room") or 0)
        assert room > 0
        page.evaluate("() => { document.querySelector('[data-files]').dataset.room = '10'; }")
        drop(page, {"big.txt": "more than ten bytes\n", "ok.txt": "tiny\n"})
        wait_for_status(page, "Uploaded 1 file. “big.txt” was not uploaded: It is too large: it has 20 bytes, and "
                               "only 10 bytes are left within this upload's quota. Delete files or ask for more room.")
        assert listed_names(page) == ["ok.txt"]
        failed = page.locator("[data-progress] > li.failed")
        assert failed.count() == 1 and "It is too large" in failed.text_content()
        check_page(page, "a file too large for the quota")
        screenshot(page, "drop-too-large")


def test_keyboard_only_with_the_file_picker(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from playwright.sync_api import expect

    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("one\n", encoding="utf-8")
    second.write_text("two, replacing one\n", encoding="utf-8")
    with browser_session(live_server, PHONE) as (_browser, page):
        dep_id = signed_in_draft(page, live_server, "keys")
        picker = page.locator(f"#upload-{dep_id}")
        picker.focus()
        expect(picker).to_be_focused()
        with page.expect_file_chooser() as chooser:
            page.keyboard.press(" ")  # the space bar opens the chooser of a focused file input
        chooser.value.set_files(str(first))
        wait_for_status(page, "Uploaded 1 file.")
        assert listed_names(page) == ["first.txt"]

        # Tab from the file's link to its "Replace", open it with Enter, choose with the space bar, send with Enter.
        page.locator('[data-files-list] a', has_text="first.txt").focus()
        for _ in range(10):
            if page.evaluate("() => document.activeElement.textContent") == "Replace":
                break
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        with page.expect_file_chooser() as chooser:
            page.keyboard.press(" ")
        chooser.value.set_files(str(second))
        page.keyboard.press("Tab")
        expect(page.get_by_role("button", name="Replace first.txt")).to_be_focused()
        page.keyboard.press("Enter")
        wait_for_status(page, "Replaced 1 file.")
        stored = server_files(page, live_server, dep_id)["first.txt"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(second.read_bytes()).hexdigest()

        page.get_by_role("button", name="Delete first.txt").focus()
        page.keyboard.press("Enter")
        wait_for_status(page, "Deleted first.txt.")
        expect(page.locator("#files-heading")).to_be_focused()  # the focus is not lost with the file
        assert server_files(page, live_server, dep_id) == {}
        check_page(page, "file area used with the keyboard")


def test_without_javascript_the_plain_forms_upload_and_replace(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    data, newer = tmp_path / "data.csv", tmp_path / "data-new.csv"
    data.write_text("a,b\n1,2\n", encoding="utf-8")
    newer.write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    with browser_session(live_server) as (browser, page):
        dep_id = signed_in_draft(page, live_server, "plain")
        plain = browser.new_context(ignore_https_errors=True, java_script_enabled=False).new_page()
        plain.context.add_cookies(page.context.cookies())
        plain.goto(f"{live_server['url']}/deposit/{dep_id}")
        assert plain.locator("[data-upload-button]").is_visible()
        plain.set_input_files(f"#upload-{dep_id}", [str(data)])
        plain.click("[data-upload-button]")
        plain.wait_for_url(re.compile(rf"/deposit/{dep_id}#files$"))
        assert plain.locator("[data-files-status]").text_content() == "Uploaded data.csv."
        sha = hashlib.sha256(data.read_bytes()).hexdigest()
        assert sha in plain.locator("[data-files-list]").text_content()

        plain.locator("summary", has_text="Replace").click()
        plain.set_input_files("[data-files-list] input[type=file]", [str(newer)])
        plain.get_by_role("button", name="Replace data.csv").click()
        plain.wait_for_url(re.compile(rf"/deposit/{dep_id}#files$"))
        assert plain.locator("[data-files-status]").text_content() == "Replaced data.csv with data-new.csv."
        assert listed_names(plain) == ["data.csv"]
        stored = server_files(page, live_server, dep_id)["data.csv"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(newer.read_bytes()).hexdigest()
        assert stored["checksums"]["sha256"] in plain.locator("[data-files-list]").text_content()
        # (No axe-core here: a page without JavaScript cannot run it; the same HTML is checked above with it.)
        plain.screenshot(path=str(SCREENSHOTS / "drop-no-javascript-desktop.png"), full_page=True)
