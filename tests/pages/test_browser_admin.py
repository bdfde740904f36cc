"""An administrator's walk through the administration area in a real browser (headless Chromium, Playwright)
against the real server over HTTPS (docs/operators/administration.md): made an administrator on the command line,
they make a moderator, find a spam account, block it with a reason, take its record down with a public reason
(the tombstone shows it, the API answers 410 with it, OAI-PMH reports the deletion) and read it all back in the
audit log. Every page is checked with axe-core at desktop and phone width and photographed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import pytest
from helpers.browser import PHONE, api_session, browser_session, check_page, screenshot
from helpers.http import ROOT

TAG = uuid.uuid4().hex[:8]  # a PostgreSQL test database keeps earlier runs' users: fresh names per run
ROOT_EMAIL = f"root-{TAG}@example.org"
HELPER = f"helper-{TAG}@example.org"
SPAMMER = f"spammer-{TAG}@example.org"
PASSWORD = "a long passphrase 4 tests"
API = "/api/deposit/depositions"


def _admin_command(live_server: dict, *argv: str, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-m", "repository", *argv], env=live_server["env"], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, check=True)
    return done.stdout


def _token(live_server: dict, email: str) -> str:
    made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "create_token.py"), "--email", email],
                          env=live_server["env"], cwd=ROOT, capture_output=True, text=True, check=True)
    return made.stdout.strip().splitlines()[-1]


def _publish(live_server: dict, token: str, title: str) -> int:
    http = api_session(live_server)
    http.headers["Authorization"] = f"Bearer {token}"
    base = live_server["url"] + API
    body = {"title": title, "upload_type": "dataset", "description": "<p>Visit casino-links.example.</p>",
            "creators": [{"name": "Spam, Sam"}]}
    dep = http.post(base, json={"metadata": body}).json()
    sent = http.post(f"{base}/{dep['id']}/files", files={"file": ("a.txt", b"buy")}, data={"name": "a.txt"})
    assert sent.status_code == 201, sent.text
    done = http.post(f"{base}/{dep['id']}/actions/publish")
    assert done.status_code == 202, done.text
    return int(done.json()["record_id"])


def _check(page, what: str, name: str) -> None:  # type: ignore[no-untyped-def]
    check_page(page, what)
    screenshot(page, name)


def test_an_administrator_moderates_in_a_browser(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    _admin_command(live_server, "create-admin", ROOT_EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    _token(live_server, HELPER)
    spam_token = _token(live_server, SPAMMER)
    recid = _publish(live_server, spam_token, f"Cheap pills {TAG}")
    http = api_session(live_server)

    with browser_session(live_server) as (_browser, page):
        page.goto(base + "/login/?next=/admin/")
        page.fill('input[name="email"]', ROOT_EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/admin/")
        expect(page.get_by_role("link", name="Administration")).to_have_count(1)
        _check(page, "administration start", "admin-start")

        # Make a moderator: find them, pick the role, save.
        page.fill("#q", HELPER)
        page.get_by_role("button", name="Find users").click()
        page.get_by_role("link", name=HELPER).click()
        page.get_by_label("Moderator: users and records").check()
        page.get_by_role("button", name="Save the role").click()
        expect(page.locator(".notice.success")).to_contain_text("The role is now moderator")
        expect(page.locator("dl.facts")).to_contain_text("moderator")
        _check(page, "a user's page", "admin-user")

        # Block the spam account with a reason: its token stops working at once.
        page.get_by_role("link", name="Users").click()
        page.fill("#q", SPAMMER)
        page.get_by_role("button", name="Find users").click()
        _check(page, "user search", "admin-user-search")
        page.get_by_role("link", name=SPAMMER).click()
        page.fill("#block-reason", "Casino links in every upload")
        page.get_by_role("button", name="Block this user").click()
        expect(page.locator("dl.facts")).to_contain_text("Blocked: Casino links in every upload")
        expect(page.get_by_role("link", name="Download everything held about this user (JSON)")).to_be_visible()
        _check(page, "a blocked user's page", "admin-user-blocked")
        assert http.get(base + API, headers={"Authorization": f"Bearer {spam_token}"}).status_code == 401

        # Take its record down with a public reason and a private note.
        page.get_by_role("link", name=str(recid), exact=True).click()
        page.wait_for_url(re.compile(rf"/admin/records/{recid}$"))
        _check(page, "a record's moderation page", "admin-record")
        page.fill("#takedown-reason", "Spam: advertising, not research")
        page.fill("#takedown-note", f"reported by ticket {TAG}")
        page.get_by_role("button", name="Take this record down").click()
        expect(page.locator("dl.facts")).to_contain_text(f"reported by ticket {TAG}")
        expect(page.get_by_role("button", name="Restore this record")).to_be_visible()
        _check(page, "a taken-down record's moderation page", "admin-record-taken-down")

        page.goto(f"{base}/records/{recid}")
        expect(page.get_by_role("heading", name="This record was taken down")).to_be_visible()
        expect(page.locator(".tombstone-facts")).to_contain_text("Spam: advertising, not research")
        assert TAG not in page.locator("main").inner_text().replace(f"Cheap pills {TAG}", "")
        _check(page, "the tombstone with the public reason", "admin-tombstone")
        gone = http.get(f"{base}/api/records/{recid}")
        assert gone.status_code == 410 and gone.json()["note"] == "Spam: advertising, not research"
        oai = http.get(f"{base}/oai2d", params={"verb": "GetRecord", "metadataPrefix": "oai_dc",
                                                "identifier": f"oai:127.0.0.1:{recid}"})
        assert 'status="deleted"' in oai.text, oai.text

        # Read it all back in the audit log, then filter by the record.
        page.goto(base + "/admin/audit/")
        log = page.locator("table.audit")
        for action in ("user.role", "user.block", "record.takedown"):
            expect(log).to_contain_text(action)
        _check(page, "the audit log", "admin-audit")
        page.fill("#audit-target", f"record:{recid}")
        page.get_by_role("button", name="Search the log").click()
        rows = page.locator("table.audit tbody tr")
        expect(rows).to_have_count(2)  # the owner's publication, then the takedown
        expect(rows.nth(0)).to_contain_text("record.takedown")
        expect(rows.nth(1)).to_contain_text("deposit.publish")
        expect(rows.nth(1)).to_contain_text(SPAMMER)

        # The same pages at phone width.
        page.set_viewport_size(PHONE)
        for path in ("/admin/", f"/admin/records/{recid}", "/admin/requests/", "/admin/audit/"):
            page.goto(base + path)
            check_page(page, f"{path} on a phone")
