"""The file area of the deposit form in a real browser (headless Chromium, Playwright) against the live server, at
desktop and phone width, checked with axe-core and photographed: several files dropped at once, each with its
labelled progress bar and then the MD5 and SHA-256 the server computed; a name already there refused next to the
file and then replaced; a file replaced through its own form and one removed; a large file sent in parts whose
connection is cut mid-way (the browser set offline while a part is on its way) and that goes on by itself when the
connection is back, sending only the parts the server lacks, its checksums verified on the server; and an upload
left by a closed page taken up again. The keyboard, the quota and the page without JavaScript:
tests/pages/test_browser_dropfiles_keys.py."""

from __future__ import annotations

import hashlib
import re

import pytest
from helpers.browser import (
    PHONE,
    api_session,
    browser_session,
    check_page,
    screenshot,
)
from helpers.dropfiles import drop, listed_names, server_files, signed_in_draft, upload_lines, wait_for_status


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_dropped_files_show_progress_checksums_and_can_be_replaced_or_removed(live_server, viewport):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with browser_session(live_server, viewport) as (_browser, page):
        dep_id = signed_in_draft(page, live_server, "dropper")
        dropped = {"readings.csv": "t,v\n1,2\n", "notes.txt": "sampled at dawn\n", "site.txt": "north ridge\n"}
        drop(page, dropped)
        wait_for_status(page, "Uploaded 3 files.")
        assert listed_names(page) == list(dropped)  # in the order dropped, whichever finished first
        stored = server_files(page, live_server, dep_id)
        rows = {row["label"]: row for row in upload_lines(page)}
        assert set(rows) == set(dropped)
        for name, text in dropped.items():
            sums = stored[name]["checksums"]
            assert sums == {"md5": hashlib.md5(text.encode(), usedforsecurity=False).hexdigest(),
                            "sha256": hashlib.sha256(text.encode()).hexdigest()}
            assert rows[name]["value"] == 100
            # The line of each file says what the server computed, and that it checked the bytes sent.
            assert "checked the bytes against this file's SHA-256" in rows[name]["message"]
            assert sums["md5"] in rows[name]["message"] and sums["sha256"] in rows[name]["message"]
            # ... and so does the list of files, as a page load shows it.
            item = page.locator(f'[data-files-list] > li[data-key="{name}"]')
            assert sums["md5"] in item.text_content() and sums["sha256"] in item.text_content()
        assert page.locator("[data-files-announce]").text_content().endswith(" uploaded.")
        check_page(page, "deposit form, three files dropped")
        screenshot(page, "drop-three-files")

        # A name already there is refused next to that file before a byte is sent, with the offer to replace it.
        drop(page, {"notes.txt": "sampled at dusk\n"})
        wait_for_status(page, "Nothing was uploaded. “notes.txt” was not uploaded: “notes.txt” is there already: "
                               "replace that file with this one, or delete it first.")
        [refused] = upload_lines(page)
        assert "is there already" in refused["message"]
        assert server_files(page, live_server, dep_id)["notes.txt"]["size"] == len(dropped["notes.txt"])
        check_page(page, "a dropped file whose name is taken")
        screenshot(page, "drop-name-taken")
        page.get_by_role("button", name="Replace the file there named notes.txt").click()
        wait_for_status(page, "Replaced 1 file.")
        assert listed_names(page) == list(dropped)  # its place is kept
        dusk = server_files(page, live_server, dep_id)["notes.txt"]
        assert dusk["checksums"]["sha256"] == hashlib.sha256(b"sampled at dusk\n").hexdigest()
        assert dusk["checksums"]["sha256"] in upload_lines(page)[0]["message"]

        # Replace through a file's own form: the chosen file takes the name and place of the one it replaces.
        page.locator('[data-files-list] > li[data-key="readings.csv"] summary', has_text="Replace").click()
        page.set_input_files('[data-files-list] > li[data-key="readings.csv"] input[type=file]',
                             files=[{"name": "readings-v2.csv", "mimeType": "text/csv", "buffer": b"t,v\n1,3\n"}])
        page.get_by_role("button", name="Replace readings.csv").click()
        wait_for_status(page, "Replaced 1 file.")
        assert listed_names(page) == list(dropped)
        assert upload_lines(page)[0]["label"] == "Replacing readings.csv with readings-v2.csv"
        assert server_files(page, live_server, dep_id)["readings.csv"]["size"] == len(b"t,v\n1,3\n")

        # Remove one before publishing.
        page.get_by_role("button", name="Delete site.txt").click()
        wait_for_status(page, "Deleted site.txt.")
        assert listed_names(page) == ["readings.csv", "notes.txt"]
        assert set(server_files(page, live_server, dep_id)) == {"readings.csv", "notes.txt"}
        check_page(page, "deposit form after a replace and a removal")
        screenshot(page, "drop-replaced-and-removed")


def test_a_large_file_resumes_by_itself_after_the_connection_is_cut(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    series = tmp_path / "series.bin"
    series.write_bytes(bytes(range(256)) * 10_000)  # 2.56 MB: 7 parts of 400 kB
    with browser_session(live_server) as (_browser, page):
        dep_id = signed_in_draft(page, live_server, "resumer")
        # Parts from 1 MB on, of 400 kB, so that a small file shows the protocol (the defaults are 64 and 16 MiB).
        page.evaluate("() => Object.assign(document.querySelector('[data-files]').dataset, "
                      "{multipartFrom: '1000000', partSize: '400000'})")
        sent: list[int] = []  # the part numbers the server was sent, in order
        cut = {"done": False}

        def parts(route):  # type: ignore[no-untyped-def]
            number = int(re.search(r"partNumber=(\d+)", route.request.url).group(1))  # type: ignore[union-attr]
            if number == 3 and not cut["done"]:
                # The connection drops while part 3 is on its way: the browser is offline until the test says.
                cut["done"] = True
                page.context.set_offline(True)
                route.abort("internetdisconnected")
                return
            sent.append(number)
            route.continue_()

        page.route(re.compile(r"partNumber=\d+"), parts)
        page.set_input_files(f"#upload-{dep_id}", [str(series)])
        row = page.locator("[data-progress] > li")
        page.wait_for_function("() => document.querySelector('[data-progress] > li.paused .upload-message')"
                               "?.textContent.includes('when the connection is back')")
        assert "The parts that arrived are kept." in row.text_content()
        page.wait_for_function("() => document.querySelector('[data-files-announce]').textContent"
                               ".startsWith('The connection was lost while uploading series.bin')")
        # The server holds an open upload with some parts and not part 3; the file does not exist yet.
        api = api_session(live_server)
        api.cookies.update({c["name"]: c["value"] for c in page.context.cookies()})
        bucket = api.get(f"{live_server['url']}/api/deposit/depositions/{dep_id}").json()["links"]["bucket"]
        [upload] = api.get(f"{bucket}?uploads").json()["uploads"]
        listing = api.get(f"{bucket}/series.bin?uploadId={upload['id']}").json()
        held = {p["part_number"] for p in listing["parts"]}
        assert 3 in listing["missing"] and 3 not in held and held
        assert server_files(page, live_server, dep_id) == {}
        check_page(page, "an upload paused by a lost connection")
        screenshot(page, "drop-paused-offline")
        before = len(sent)

        page.context.set_offline(False)  # the connection is back: the upload goes on by itself
        wait_for_status(page, "Uploaded 1 file.")
        assert listed_names(page) == ["series.bin"]
        again = sent[before:]
        assert 3 in again and not set(again) & held  # only what the server lacked went again
        assert held | set(again) == set(range(7))
        body = series.read_bytes()
        stored = server_files(page, live_server, dep_id)["series.bin"]
        assert stored["size"] == len(body)
        assert stored["checksums"] == {"md5": hashlib.md5(body, usedforsecurity=False).hexdigest(),
                                       "sha256": hashlib.sha256(body).hexdigest()}
        assert stored["checksums"]["sha256"] in row.text_content()
        assert "the server checked each part against its SHA-256" in row.text_content()
        assert page.locator("[data-unfinished]").is_hidden()  # nothing left unfinished
        check_page(page, "a large file resumed and stored")
        screenshot(page, "drop-resumed")


def test_an_upload_left_by_a_closed_page_goes_on_when_the_file_is_chosen_again(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    series = tmp_path / "series.bin"
    series.write_bytes(bytes(range(256)) * 10_000)
    with browser_session(live_server) as (_browser, page):
        dep_id = signed_in_draft(page, live_server, "returner")
        small_parts = ("() => Object.assign(document.querySelector('[data-files]').dataset, "
                       "{multipartFrom: '1000000', partSize: '400000'})")
        page.evaluate(small_parts)
        sent: list[tuple[int, int]] = []  # (page load, part number)

        def part_fails(route):  # type: ignore[no-untyped-def]
            number = int(re.search(r"partNumber=(\d+)", route.request.url).group(1))  # type: ignore[union-attr]
            if number == 3:
                route.abort()  # this part never gets through while the first page is open
            else:
                sent.append((1, number))
                route.continue_()

        page.route(re.compile(r"partNumber=\d+"), part_fails)
        page.set_input_files(f"#upload-{dep_id}", [str(series)])
        page.wait_for_selector("[data-progress] > li.paused")
        page.get_by_role("button", name="Resume the upload of series.bin").wait_for()

        # The page is closed (here: loaded again) before the upload could finish. Chosen again, the same file
        # goes on from the parts the server holds (this browser remembers which upload holds it).
        page.goto(f"{live_server['url']}/deposit/{dep_id}")
        page.unroute(re.compile(r"partNumber=\d+"))  # only now: the first page would have sent part 3 again
        first = {n for _, n in sent}
        page.wait_for_selector("[data-unfinished]:not([hidden]) li")
        assert "series.bin" in page.locator("[data-unfinished] li").text_content()
        page.evaluate(small_parts)
        page.route(re.compile(r"partNumber=\d+"), lambda route: (sent.append((2, int(re.search(
            r"partNumber=(\d+)", route.request.url).group(1)))), route.continue_()))  # type: ignore[union-attr]
        page.set_input_files(f"#upload-{dep_id}", [str(series)])
        wait_for_status(page, "Uploaded 1 file.")
        second = {n for load, n in sent if load == 2}
        assert 3 in second and not second & first and first | second == set(range(7))
        stored = server_files(page, live_server, dep_id)["series.bin"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(series.read_bytes()).hexdigest()
