"""A published version's corrections on the deposit page in a real browser (docs/researchers/corrections.md): fix
the files once (upload a corrected file, publish again, see the record page's file history), then delete the
version after a confirmation step with a reason and see its tombstone. Each page is checked with axe-core and
photographed at desktop and phone width."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import browser_session, check_page, screenshot, sign_up_and_in

EMAIL = f"corrector-{uuid.uuid4().hex[:8]}@example.org"  # fresh: PostgreSQL keeps earlier runs' users
PASSWORD = "a long passphrase 4 tests"
METADATA = {"metadata": {"upload_type": "dataset", "title": "Lake temperatures", "description": "Daily means.",
                         "creators": [{"name": "Doe, Jane"}]}}  # fmt: skip


def _api(page, method: str, url: str, **kwargs):  # type: ignore[no-untyped-def]
    """An API write with the browser's session and CSRF token, as the page's scripts make."""
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
    answer = page.request.fetch(url, method=method, headers={"X-CSRFToken": token, "Referer": page.url}, **kwargs)
    assert answer.ok, answer.text()
    return answer.json()


def test_fix_the_files_then_delete_the_version(live_server, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    with browser_session(live_server) as (_browser, page):
        sign_up_and_in(page, live_server, EMAIL, PASSWORD, "/deposit/new")
        page.get_by_role("button", name="Start a new upload").click()
        page.wait_for_url(re.compile(r"/deposit/\d+$"))
        dep_id = int(page.url.rsplit("/", 1)[1])
        api = f"{base}/api/deposit/depositions/{dep_id}"
        dep = _api(page, "PUT", api, data=METADATA)
        token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
        put = page.request.put(dep["links"]["bucket"] + "/temps.csv", data=b"day,t\n1,41\n",
                               headers={"X-CSRFToken": token, "Referer": page.url})
        assert put.ok, put.text()
        _api(page, "POST", api + "/actions/publish")
        page.goto(f"{base}/deposit/{dep_id}")
        expect(page.get_by_role("button", name="Fix the files")).to_be_visible()
        check_page(page, "published deposit with corrections")
        screenshot(page, "deposit-corrections")

        # Fix the files: open them, upload the corrected table under its name, publish again.
        page.get_by_role("button", name="Fix the files").click()
        expect(page.get_by_text("You are fixing the files of a published upload")).to_be_visible()
        page.locator("[data-file-id] button", has_text="Delete").first.click()
        page.wait_for_function("() => document.querySelectorAll('[data-file-id]').length === 0")
        fixed = tmp_path / "temps.csv"
        fixed.write_bytes(b"day,t\n1,4.1\n")
        page.set_input_files(f"#upload-{dep_id}", [str(fixed)])
        page.wait_for_function("() => document.querySelectorAll('[data-file-id]').length === 1")
        check_page(page, "deposit with its files open")
        screenshot(page, "deposit-files-open")
        page.get_by_role("button", name="Review and publish changes").click()
        page.wait_for_url(re.compile(rf"/deposit/{dep_id}/publish$"))
        expect(page.get_by_text("The files fixed in this edit replace the published ones")).to_be_visible()
        page.get_by_role("button", name="Publish changes", exact=True).click()
        page.wait_for_url(re.compile(rf"/deposit/{dep_id}$"))
        page.goto(f"{base}/records/{dep_id}")
        history = page.locator(".file-history")
        expect(history).to_contain_text("temps.csv")
        expect(history).to_contain_text("replaced")
        check_page(page, "record page with a file history")
        screenshot(page, "record-file-history")

        # Delete the version: a confirmation page, a reason and a note, then the tombstone.
        page.goto(f"{base}/deposit/{dep_id}")
        expect(page.get_by_role("button", name="Fix the files")).to_have_count(0)
        page.get_by_role("link", name="Delete this version…").click()
        page.wait_for_url(re.compile(rf"/deposit/{dep_id}/delete$"))
        check_page(page, "confirm the deletion of a version")
        screenshot(page, "deposit-delete-version")
        page.get_by_label("Contains personal or sensitive data").check()
        page.fill("#deletion-note", "A station's owner asked us to remove the readings.")
        page.get_by_role("button", name="Delete this version").click()
        page.wait_for_url(re.compile(rf"/records/{dep_id}$"))
        expect(page.get_by_role("heading", name="This record was deleted")).to_be_visible()
        expect(page.locator(".tombstone-facts")).to_contain_text("Contains personal or sensitive data")
        expect(page.locator(".error-message")).to_contain_text("Lake temperatures")
        check_page(page, "tombstone of a deleted version")
        screenshot(page, "record-deleted-tombstone")
        assert page.request.get(f"{base}/api/records/{dep_id}").status == 410
