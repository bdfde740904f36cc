"""The file area of the deposit form in a real browser (headless Chromium, Playwright) against the live server, at
desktop and phone width, checked with axe-core and photographed: several files dropped at once, each with its
labelled progress bar and then the MD5 and SHA-256 the server computed; a large file sent in parts whose connection
is cut mid-way (the browser set offline while a part is on its way) and that goes on by itself when the connection
is back, sending only the parts the server lacks, its checksums verified on the server; a name already there
refused next to the file and then replaced; a file replaced and one removed; the whole area used with the keyboard
alone through the plain file picker; and the same area without JavaScript."""

from __future__ import annotations

import hashlib
import re
import uuid

import pytest
from helpers.browser import (
    PHONE,
    SCREENSHOTS,
    api_session,
    browser_session,
    check_page,
    screenshot,
    sign_up_and_in,
)

PASSWORD = "a long passphrase 4 drops"


def _new_draft(page) -> int:  # type: ignore[no-untyped-def]
    """A draft made by the page's own session through the API (the CSRF token of the page's forms)."""
    return int(page.evaluate("""async () => {
        const token = document.querySelector('input[name="csrf_token"]').value;
        const answer = await fetch('/api/deposit/depositions', {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRFToken': token},
            body: JSON.stringify({metadata: {title: 'Glacier cores', upload_type: 'dataset'}})});
        if (answer.status !== 201) { throw new Error('create: ' + answer.status + ' ' + await answer.text()); }
        return (await answer.json()).id;
    }"""))


def _signed_in_draft(page, live_server, who: str) -> int:  # type: ignore[no-untyped-def]
    sign_up_and_in(page, live_server, f"{who}-{uuid.uuid4().hex[:8]}@example.org", PASSWORD, "/deposit")
    dep_id = _new_draft(page)
    page.goto(f"{live_server['url']}/deposit/{dep_id}")
    return dep_id


def _names(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all("[data-files-list] > li", "items => items.map(li => li.dataset.key)")


def _wait_for_status(page, text: str) -> None:  # type: ignore[no-untyped-def]
    """Until the file area says `text` (said once the batch is over and the list reloaded)."""
    page.wait_for_function("text => document.querySelector('[data-files-status]').textContent === text", arg=text)


def _server_files(page, live_server, dep_id: int) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """The draft's files as the bucket lists them (with both checksums), by name, read with the page's session."""
    api = api_session(live_server)
    api.cookies.update({c["name"]: c["value"] for c in page.context.cookies()})
    deposition = api.get(f"{live_server['url']}/api/deposit/depositions/{dep_id}").json()
    bucket = api.get(deposition["links"]["bucket"]).json()
    return {o["key"]: o for o in bucket["contents"]}


def _drop(page, files: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Drop files (name -> text) on the drop zone, as a person dragging them from their desktop does."""
    page.evaluate("""files => {
        const drop = new DataTransfer();
        Object.entries(files).forEach(([name, text]) => drop.items.add(new File([text], name, {type: 'text/plain'})));
        const zone = document.querySelector('[data-dropzone]');
        zone.dispatchEvent(new DragEvent('dragenter', {dataTransfer: drop, bubbles: true, cancelable: true}));
        zone.dispatchEvent(new DragEvent('drop', {dataTransfer: drop, bubbles: true, cancelable: true}));
    }""", files)


def _rows(page) -> list[dict]:  # type: ignore[no-untyped-def]
    """Each line under the drop zone: the label of its progress bar, the bar's value, its message."""
    return page.eval_on_selector_all("[data-progress] > li", """items => items.map(li => ({
        label: li.querySelector('progress').labels[0].textContent, value: li.querySelector('progress').value,
        message: li.querySelector('.upload-message').textContent}))""")


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_dropped_files_show_progress_checksums_and_can_be_replaced_or_removed(live_server, viewport):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with browser_session(live_server, viewport) as (_browser, page):
        dep_id = _signed_in_draft(page, live_server, "dropper")
        dropped = {"readings.csv": "t,v\n1,2\n", "notes.txt": "sampled at dawn\n", "site.txt": "north ridge\n"}
        _drop(page, dropped)
        _wait_for_status(page, "Uploaded 3 files.")
        assert _names(page) == list(dropped)  # in the order dropped, whichever finished first
        stored = _server_files(page, live_server, dep_id)
        rows = {row["label"]: row for row in _rows(page)}
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
        _drop(page, {"notes.txt": "sampled at dusk\n"})
        _wait_for_status(page, "Nothing was uploaded. “notes.txt” was not uploaded: “notes.txt” is there already: "
                               "replace that file with this one, or delete it first.")
        [refused] = _rows(page)
        assert "is there already" in refused["message"]
        assert _server_files(page, live_server, dep_id)["notes.txt"]["size"] == len(dropped["notes.txt"])
        check_page(page, "a dropped file whose name is taken")
        screenshot(page, "drop-name-taken")
        page.get_by_role("button", name="Replace the file there named notes.txt").click()
        _wait_for_status(page, "Replaced 1 file.")
        assert _names(page) == list(dropped)  # its place is kept
        dusk = _server_files(page, live_server, dep_id)["notes.txt"]
        assert dusk["checksums"]["sha256"] == hashlib.sha256(b"sampled at dusk\n").hexdigest()
        assert dusk["checksums"]["sha256"] in _rows(page)[0]["message"]

        # Replace through a file's own form: the chosen file takes the name and place of the one it replaces.
        page.locator('[data-files-list] > li[data-key="readings.csv"] summary', has_text="Replace").click()
        page.set_input_files('[data-files-list] > li[data-key="readings.csv"] input[type=file]',
                             files=[{"name": "readings-v2.csv", "mimeType": "text/csv", "buffer": b"t,v\n1,3\n"}])
        page.get_by_role("button", name="Replace readings.csv").click()
        _wait_for_status(page, "Replaced 1 file.")
        assert _names(page) == list(dropped)
        assert _rows(page)[0]["label"] == "Replacing readings.csv with readings-v2.csv"
        assert _server_files(page, live_server, dep_id)["readings.csv"]["size"] == len(b"t,v\n1,3\n")

        # Remove one before publishing.
        page.get_by_role("button", name="Delete site.txt").click()
        _wait_for_status(page, "Deleted site.txt.")
        assert _names(page) == ["readings.csv", "notes.txt"]
        assert set(_server_files(page, live_server, dep_id)) == {"readings.csv", "notes.txt"}
        check_page(page, "deposit form after a replace and a removal")
        screenshot(page, "drop-replaced-and-removed")


def test_a_large_file_resumes_by_itself_after_the_connection_is_cut(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    series = tmp_path / "series.bin"
    series.write_bytes(bytes(range(256)) * 10_000)  # 2.56 MB: 7 parts of 400 kB
    with browser_session(live_server) as (_browser, page):
        dep_id = _signed_in_draft(page, live_server, "resumer")
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
        assert _server_files(page, live_server, dep_id) == {}
        check_page(page, "an upload paused by a lost connection")
        screenshot(page, "drop-paused-offline")
        before = len(sent)

        page.context.set_offline(False)  # the connection is back: the upload goes on by itself
        _wait_for_status(page, "Uploaded 1 file.")
        assert _names(page) == ["series.bin"]
        again = sent[before:]
        assert 3 in again and not set(again) & held  # only what the server lacked went again
        assert held | set(again) == set(range(7))
        body = series.read_bytes()
        stored = _server_files(page, live_server, dep_id)["series.bin"]
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
        dep_id = _signed_in_draft(page, live_server, "returner")
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
        _wait_for_status(page, "Uploaded 1 file.")
        second = {n for load, n in sent if load == 2}
        assert 3 in second and not second & first and first | second == set(range(7))
        stored = _server_files(page, live_server, dep_id)["series.bin"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(series.read_bytes()).hexdigest()


def test_too_large_for_the_quota_is_said_next_to_the_file(live_server):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with browser_session(live_server) as (_browser, page):
        _signed_in_draft(page, live_server, "quota")
        # The room the page was given is what the bucket's quota leaves; a file past it is refused before sending.
        room = int(page.locator("[data-files]").get_attribute("data-room") or 0)
        assert room > 0
        page.evaluate("() => { document.querySelector('[data-files]').dataset.room = '10'; }")
        _drop(page, {"big.txt": "more than ten bytes\n", "ok.txt": "tiny\n"})
        _wait_for_status(page, "Uploaded 1 file. “big.txt” was not uploaded: It is too large: it has 20 bytes, and "
                               "only 10 bytes are left within this upload's quota. Delete files or ask for more room.")
        assert _names(page) == ["ok.txt"]
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
        dep_id = _signed_in_draft(page, live_server, "keys")
        picker = page.locator(f"#upload-{dep_id}")
        picker.focus()
        expect(picker).to_be_focused()
        with page.expect_file_chooser() as chooser:
            page.keyboard.press(" ")  # the space bar opens the chooser of a focused file input
        chooser.value.set_files(str(first))
        _wait_for_status(page, "Uploaded 1 file.")
        assert _names(page) == ["first.txt"]

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
        _wait_for_status(page, "Replaced 1 file.")
        stored = _server_files(page, live_server, dep_id)["first.txt"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(second.read_bytes()).hexdigest()

        page.get_by_role("button", name="Delete first.txt").focus()
        page.keyboard.press("Enter")
        _wait_for_status(page, "Deleted first.txt.")
        expect(page.locator("#files-heading")).to_be_focused()  # the focus is not lost with the file
        assert _server_files(page, live_server, dep_id) == {}
        check_page(page, "file area used with the keyboard")


def test_without_javascript_the_plain_forms_upload_and_replace(live_server, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    data, newer = tmp_path / "data.csv", tmp_path / "data-new.csv"
    data.write_text("a,b\n1,2\n", encoding="utf-8")
    newer.write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    with browser_session(live_server) as (browser, page):
        dep_id = _signed_in_draft(page, live_server, "plain")
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
        assert _names(plain) == ["data.csv"]
        stored = _server_files(page, live_server, dep_id)["data.csv"]
        assert stored["checksums"]["sha256"] == hashlib.sha256(newer.read_bytes()).hexdigest()
        assert stored["checksums"]["sha256"] in plain.locator("[data-files-list]").text_content()
        # (No axe-core here: a page without JavaScript cannot run it; the same HTML is checked above with it.)
        plain.screenshot(path=str(SCREENSHOTS / "drop-no-javascript-desktop.png"), full_page=True)
