"""Uploads in a real browser (headless Chromium, Playwright) against the real server over HTTPS: a signed-in user's
draft (made with My uploads' button, or through the API with the browser's own session), two files chosen with the file picker and one dropped
on the drop zone, each PUT to the bucket with a progress bar that reaches 100%, the list updated in place, a file
moved and one deleted through the API, the page checked with axe-core and photographed; then My uploads. Large
files in parts, resuming, checksums, replacing and keyboard use: tests/pages/test_browser_dropfiles.py."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import api_session, browser_session, check_page, screenshot, sign_up_and_in
from helpers.dropfiles import listed_names, wait_for_status

# Fresh addresses each run: on PostgreSQL the live server shares the test database, which keeps earlier runs' users.
EMAIL = f"uploader-{uuid.uuid4().hex[:8]}@example.org"
PASSWORD = "a long passphrase 4 uploads"
BIG = 3_000_000  # large enough for the browser to report progress on the way


def _wait_for_names(page, wanted: list[str]) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function("wanted => JSON.stringify(Array.from(document.querySelectorAll("
                           "'[data-files-list] > li')).map(li => li.dataset.key)) === JSON.stringify(wanted)",
                           arg=wanted)


def test_uploads_with_progress_reorder_and_delete(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    big, small = tmp_path / "readings.csv", tmp_path / "notes.txt"
    big.write_bytes(b"t,v\n" + b"1,2\n" * (BIG // 4))
    small.write_text("sampled at dawn\n", encoding="utf-8")
    extra = tmp_path / "extra.txt"
    extra.write_text("added without JavaScript\n", encoding="utf-8")
    with browser_session(live_server) as (browser, page):
        sign_up_and_in(page, live_server, EMAIL, PASSWORD, "/deposit")
        assert "You have no uploads yet" in page.content()
        check_page(page, "my uploads, empty")
        screenshot(page, "my-uploads-empty")

        # The empty state's button makes a draft and opens its form (repository/pages/deposit.py).
        page.click("text=Start a new upload")
        page.wait_for_url(re.compile(r"/deposit/\d+$"))
        dep_id = int(page.url.rsplit("/", 1)[1])
        assert page.locator("#files").count() == 1, "the deposit form has no file area"

        page.set_input_files(f"#upload-{dep_id}", [str(big), str(small)])
        wait_for_status(page, "Uploaded 2 files.")
        assert listed_names(page) == ["readings.csv", "notes.txt"]  # in the order chosen, whichever finished first
        bars = page.locator("[data-progress] progress")
        assert bars.count() == 2
        assert [bars.nth(i).get_attribute("value") for i in range(2)] == ["100", "100"]
        assert page.locator("[data-progress] .upload-pct").all_text_contents() == ["100%", "100%"]
        assert "2 files," in page.locator("[data-files-summary]").text_content()

        # A file dropped on the drop zone is uploaded the same way.
        page.evaluate("""id => {
            const drop = new DataTransfer();
            drop.items.add(new File(['dropped bytes'], 'dropped.txt', {type: 'text/plain'}));
            document.querySelector('[data-dropzone]').dispatchEvent(
                new DragEvent('drop', {dataTransfer: drop, bubbles: true, cancelable: true}));
        }""", dep_id)
        wait_for_status(page, "Uploaded 1 file.")
        assert listed_names(page) == ["readings.csv", "notes.txt", "dropped.txt"]

        # A name already there is refused in the browser, before any byte is sent.
        page.set_input_files(f"#upload-{dep_id}", [str(small)])
        page.wait_for_function("() => document.querySelector('[data-files-status]').textContent.includes('there already')")
        assert listed_names(page) == ["readings.csv", "notes.txt", "dropped.txt"]

        page.click('button[aria-label="Move notes.txt up"]')
        _wait_for_names(page, ["notes.txt", "readings.csv", "dropped.txt"])
        page.click('button[aria-label="Delete dropped.txt"]')
        wait_for_status(page, "Deleted dropped.txt.")
        assert listed_names(page) == ["notes.txt", "readings.csv"]

        # The server holds what the page shows, in that order, with the bytes sent.
        api = api_session(live_server)
        api.cookies.update({c["name"]: c["value"] for c in page.context.cookies()})
        files = api.get(f"{base}/api/deposit/depositions/{dep_id}/files").json()
        assert [f["filename"] for f in files] == ["notes.txt", "readings.csv"]
        assert [f["filesize"] for f in files] == [small.stat().st_size, big.stat().st_size]
        assert page.locator(f'text={files[1]["checksum"]}').count() == 1

        check_page(page, "deposit form with files")
        screenshot(page, "deposit-files")

        # Without JavaScript the same area works through its plain forms (the same session's cookie).
        plain = browser.new_context(ignore_https_errors=True, java_script_enabled=False).new_page()
        plain.context.add_cookies(page.context.cookies())
        plain.goto(f"{base}/deposit/{dep_id}")
        plain.set_input_files(f"#upload-{dep_id}", [str(tmp_path / "notes.txt"), str(extra)])
        plain.click("[data-upload-button]")
        plain.wait_for_url(re.compile(rf"/deposit/{dep_id}#files$"))
        said = plain.locator("[data-files-status]").text_content()
        assert said.startswith("Uploaded extra.txt. “notes.txt” was not uploaded: A file named “notes.txt” is there")
        assert listed_names(plain) == ["notes.txt", "readings.csv", "extra.txt"]
        plain.click('button[aria-label="Move extra.txt up"]')
        plain.wait_for_url(re.compile(rf"/deposit/{dep_id}#files$"))
        assert listed_names(plain) == ["notes.txt", "extra.txt", "readings.csv"]
        plain.click('button[aria-label="Delete extra.txt"]')
        plain.wait_for_url(re.compile(rf"/deposit/{dep_id}#files$"))
        assert listed_names(plain) == ["notes.txt", "readings.csv"]
        assert plain.locator("[data-files-status]").text_content() == "Deleted extra.txt."
        plain.context.close()

        page.goto(base + "/deposit")
        assert page.locator("h2.upload-title").all_text_contents() == ["Untitled"]
        assert "".join(page.locator(".uploads-list .facts").text_content().split()).endswith("Files2")
        check_page(page, "my uploads")
        screenshot(page, "my-uploads")
