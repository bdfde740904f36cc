"""An administrator moderates in a real browser (headless Chromium, Playwright) against the real server over HTTPS,
new accounts' first publications held for approval (docs/operators/moderation.md): they ban a link domain, approve a
newcomer's first deposit from the queue, block a spam account from it (its records taken down with the reason: the
tombstone shows it, OAI-PMH reports the deletions), hide a record while reviewing it and unhide it, and read the
decisions back in the audit log. Every page is checked with axe-core at desktop and phone width and photographed."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import PHONE, api_session, browser_session, check_page
from helpers.staff import admin_command, check_and_photograph, cli_token, publish_over_api

TAG = uuid.uuid4().hex[:8]  # a PostgreSQL test database keeps earlier runs' users: fresh names per run
ROOT_EMAIL = f"root-{TAG}@example.org"
NEWCOMER = f"new-{TAG}@example.org"
SPAMMER = f"spammer-{TAG}@example.org"
PASSWORD = "a long passphrase 4 tests"
API = "/api/deposit/depositions"


def test_an_administrator_approves_a_first_deposit_and_blocks_a_spammer(live_server_moderated):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    live = live_server_moderated
    base = live["url"]
    admin_command(live, "create-admin", ROOT_EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    newcomer = publish_over_api(live, cli_token(live, NEWCOMER), f"Lake temperatures {TAG}", "<p>Daily readings.</p>")
    spam_token = cli_token(live, SPAMMER)
    spam = [publish_over_api(live, spam_token, f"Cheap pills {TAG} {n}", '<p><a href="https://pills.example/">Buy</a></p>')
            for n in (1, 2)]
    http = api_session(live)
    assert http.get(f"{base}/api/records/{newcomer}").status_code == 404  # held: not public

    with browser_session(live) as (_browser, page):
        page.goto(base + "/login/?next=/admin/moderation/")
        page.fill('input[name="email"]', ROOT_EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/admin/moderation/")
        queue = page.locator("ul.moderation-queue > li")
        expect(queue).to_have_count(3)
        expect(page.locator("ul.moderation-queue")).to_contain_text("The first publication of a new account.")
        check_and_photograph(page, "the moderation queue", "moderation-queue")

        # Ban a link domain on the same page.
        page.fill("#domain", "pills.example")
        page.get_by_role("button", name="Ban the domain").click()
        expect(page.locator("table.domains")).to_contain_text("pills.example")

        # Approve the newcomer's first deposit: public at once.
        page.get_by_role("button", name=f"Approve record {newcomer}").click()
        expect(page.locator(".notice.success")).to_contain_text(f"Record {newcomer} is approved")
        expect(queue).to_have_count(2)
        assert http.get(f"{base}/api/records/{newcomer}").status_code == 200

        # Block the spammer from one of their records: every record of theirs is taken down with the reason.
        page.fill(f"#block-{spam[0]}", "Advertising, not research")
        page.get_by_role("button", name=f"Block the owner of record {spam[0]}").click()
        expect(page.locator(".notice.success")).to_contain_text("is blocked")
        expect(page.get_by_text("Nothing to review.")).to_be_visible()
        check_and_photograph(page, "the empty queue with a banned domain", "moderation-queue-empty")
        assert http.get(base + API, headers={"Authorization": f"Bearer {spam_token}"}).status_code == 401
        for recid in spam:
            gone = http.get(f"{base}/api/records/{recid}")
            assert gone.status_code == 410 and gone.json()["note"] == "Advertising, not research"
            oai = http.get(f"{base}/oai2d", params={"verb": "GetRecord", "metadataPrefix": "oai_dc",
                                                    "identifier": f"oai:127.0.0.1:{recid}"})
            assert 'status="deleted"' in oai.text, oai.text
        page.goto(f"{base}/records/{spam[1]}")
        expect(page.locator(".tombstone-facts")).to_contain_text("Advertising, not research")
        check_and_photograph(page, "a spam record's tombstone", "moderation-tombstone")

        # Hide the approved record while reviewing it, then unhide it.
        page.goto(f"{base}/admin/records/{newcomer}")
        page.fill("#hide-reason", "A reader reported the data as copied")
        page.get_by_role("button", name="Hide this record").click()
        expect(page.locator("dl.facts")).to_contain_text("Hidden while reviewed")
        check_and_photograph(page, "a hidden record's moderation page", "moderation-record-hidden")
        page.goto(f"{base}/records/{newcomer}")
        expect(page.locator(".review-notice")).to_contain_text("hidden from search")
        assert page.locator('meta[name="robots"]').get_attribute("content") == "noindex"
        check_and_photograph(page, "a hidden record's page", "moderation-record-page-hidden")
        page.goto(f"{base}/admin/records/{newcomer}")
        page.get_by_role("button", name="Unhide this record").click()
        expect(page.locator("dl.facts")).to_contain_text("Public")

        # Every decision is in the audit log.
        page.get_by_role("link", name="Audit log").click()
        log = page.locator("table.audit")
        for action in ("record.approve", "domain.ban", "user.block", "record.takedown", "record.hide",
                       "record.unhide", "record.held"):
            expect(log).to_contain_text(action)

        # The same pages at phone width.
        page.set_viewport_size(PHONE)
        for path in ("/admin/moderation/", f"/admin/records/{newcomer}"):
            page.goto(base + path)
            check_page(page, f"{path} on a phone")
        page.goto(base + "/admin/moderation/")
        assert re.search(r"pills\.example", page.locator("main").inner_text())
