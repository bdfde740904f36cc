"""An administrator's walk through the administration area in a real browser (headless Chromium, Playwright)
against the real server over HTTPS (docs/operators/administration.md): made an administrator on the command line,
they make a moderator, find a spam account, block it with a reason, take its record down with a public reason
(the tombstone shows it, the API answers 410 with it, OAI-PMH reports the deletion) and read it all back in the
audit log. Every page is checked with axe-core at desktop and phone width and photographed."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import PHONE, api_session, browser_session, check_page
from helpers.staff import admin_command, check_and_photograph, cli_token, publish_over_api

TAG = uuid.uuid4().hex[:8]  # a PostgreSQL test database keeps earlier runs' users: fresh names per run
ROOT_EMAIL = f"root-{TAG}@example.org"
HELPER = f"helper-{TAG}@example.org"
SPAMMER = f"spammer-{TAG}@example.org"
PASSWORD = "a long passphrase 4 tests"
API = "/api/deposit/depositions"


def test_an_administrator_moderates_in_a_browser(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    admin_command(live_server, "create-admin", ROOT_EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    cli_token(live_server, HELPER)
    spam_token = cli_token(live_server, SPAMMER)
    recid = publish_over_api(live_server, spam_token, f"Cheap pills {TAG}")
    http = api_session(live_server)

    with browser_session(live_server) as (_browser, page):
        page.goto(base + "/login/?next=/admin/")
        page.fill('input[name="email"]', ROOT_EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/admin/")
        expect(page.get_by_role("link", name="Administration")).to_have_count(1)
        check_and_photograph(page, "administration start", "admin-start")

        # Make a moderator: find them, pick the role, save.
        page.fill("#q", HELPER)
        page.get_by_role("button", name="Find users").click()
        page.get_by_role("link", name=HELPER).click()
        page.get_by_label("Moderator: users and records").check()
        page.get_by_role("button", name="Save the role").click()
        expect(page.locator(".notice.success")).to_contain_text("The role is now moderator")
        expect(page.locator("dl.facts")).to_contain_text("moderator")
        check_and_photograph(page, "a user's page", "admin-user")

        # Block the spam account with a reason: its token stops working at once.
        page.get_by_role("link", name="Users").click()
        page.fill("#q", SPAMMER)
        page.get_by_role("button", name="Find users").click()
        check_and_photograph(page, "user search", "admin-user-search")
        page.get_by_role("link", name=SPAMMER).click()
        page.fill("#block-reason", "Casino links in every upload")
        page.get_by_role("button", name="Block this user").click()
        expect(page.locator("dl.facts")).to_contain_text("Blocked: Casino links in every upload")
        expect(page.get_by_role("link", name="Download everything held about this user (JSON)")).to_be_visible()
        check_and_photograph(page, "a blocked user's page", "admin-user-blocked")
        assert http.get(base + API, headers={"Authorization": f"Bearer {spam_token}"}).status_code == 401

        # Take its record down with a public reason and a private note.
        page.get_by_role("link", name=str(recid), exact=True).click()
        page.wait_for_url(re.compile(rf"/admin/records/{recid}$"))
        check_and_photograph(page, "a record's moderation page", "admin-record")
        page.fill("#takedown-reason", "Spam: advertising, not research")
        page.fill("#takedown-note", f"reported by ticket {TAG}")
        page.get_by_role("button", name="Take this record down").click()
        expect(page.locator("dl.facts")).to_contain_text(f"reported by ticket {TAG}")
        expect(page.get_by_role("button", name="Restore this record")).to_be_visible()
        check_and_photograph(page, "a taken-down record's moderation page", "admin-record-taken-down")

        page.goto(f"{base}/records/{recid}")
        expect(page.get_by_role("heading", name="This record was taken down")).to_be_visible()
        expect(page.locator(".tombstone-facts")).to_contain_text("Spam: advertising, not research")
        assert TAG not in page.locator("main").inner_text().replace(f"Cheap pills {TAG}", "")
        check_and_photograph(page, "the tombstone with the public reason", "admin-tombstone")
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
        check_and_photograph(page, "the audit log", "admin-audit")
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
