"""An administrator's walk through the jobs page and the site's branding in a real browser (headless Chromium,
Playwright) against the real server over HTTPS (docs/operators/administration.md#jobs,
docs/operators/branding-and-pages.md): they retry a failing outbox entry, write the About page (whose script stays
inert), change the primary colour (a pale one is refused), add a maintenance banner, and read it all back in the
audit log. Every page is checked with axe-core at desktop and phone width and photographed."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from helpers.browser import PHONE, api_session, browser_session, check_page
from helpers.browser import check_and_photograph as _check
from helpers.http import ROOT

from repository import outbox
from repository.storage.engine import open_database
from repository.storage.tables.outbox import outbox as outbox_table

TAG = uuid.uuid4().hex[:8]  # a PostgreSQL test database keeps earlier runs' rows: fresh names per run
ROOT_EMAIL = f"root-{TAG}@example.org"
DEPOSITOR = f"depositor-{TAG}@example.org"
PASSWORD = "a long passphrase 4 tests"
API = "/api/deposit/depositions"
ABOUT = f"""# Who we are

The repository of the **Example University** ({TAG}).

<script>document.title = "owned"</script>
[a link that must not run](javascript:document.title='owned')
"""


@pytest.fixture(scope="module", autouse=True)
def terms_at_sign_up() -> Iterator[None]:
    # Module-scoped and autouse: set before the module's live server starts, which reads it from its environment.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SIGNUP_REQUIRES_TERMS", "true")
        yield


def _run(live_server: dict, *argv: str, stdin: str = "") -> str:
    return subprocess.run(argv, env=live_server["env"], cwd=ROOT, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def _publish(live_server: dict) -> int:
    token = _run(live_server, sys.executable, os.path.join(ROOT, "scripts", "create_token.py"), "--email",
                 DEPOSITOR).strip().splitlines()[-1]
    http = api_session(live_server)
    http.headers["Authorization"] = f"Bearer {token}"
    base = live_server["url"] + API
    dep = http.post(base, json={"metadata": {"title": f"Dataset {TAG}", "upload_type": "dataset",
                                             "description": "Numbers.", "creators": [{"name": "Doe, Jane"}]}}).json()
    assert http.post(f"{base}/{dep['id']}/files", files={"file": ("a.csv", b"a,b\n1,2\n")},
                     data={"name": "a.csv"}).status_code == 201
    done = http.post(f"{base}/{dep['id']}/actions/publish")
    assert done.status_code == 202, done.text
    return int(done.json()["record_id"])


def _failing_entry(live_server: dict, recid: int) -> int:
    """An indexing entry of record `recid` whose attempt failed, as the indexer records a failure that would fail
    the same way again (its next try 10 minutes away, so only a retry brings it back before the test ends)."""
    db = open_database(live_server["env"]["DATABASE_URL"])
    try:
        with db.write() as conn:
            outbox.enqueue(conn, "index", recid)  # no indexer wired here: left to the server's
        with db.write() as conn:
            row = conn.execute(outbox_table.select().where(outbox_table.c.recid == recid, outbox_table.c.done.is_(None))
                               .order_by(outbox_table.c.id.desc())).mappings().first()
            assert row is not None
            outbox.mark_failed(conn, [row], f"ConnectionError: the search engine refused ({TAG})", retryable=False)
        return int(row["id"])
    finally:
        db.engine.dispose()


def test_an_administrator_runs_jobs_and_brands_the_site_in_a_browser(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    _run(live_server, sys.executable, "-m", "repository", "create-admin", ROOT_EMAIL, "--password-stdin",
         stdin=PASSWORD + "\n")
    recid = _publish(live_server)
    entry_id = _failing_entry(live_server, recid)

    with browser_session(live_server) as (browser, page):
        page.goto(base + "/login/?next=/admin/")
        page.fill('input[name="email"]', ROOT_EMAIL)
        page.fill('input[name="password"]', PASSWORD)
        page.press('input[name="password"]', "Enter")
        page.wait_for_url("**/admin/")

        # The jobs page shows the failing entry with its last error; retry it.
        page.get_by_role("link", name="Jobs").click()
        entry = page.locator(".cards > li", has_text=f"Entry {entry_id}:")
        expect(entry).to_contain_text(f"the search engine refused ({TAG})")
        expect(page.locator("dl.facts").first).to_contain_text("Database")
        _check(page, "the jobs page with a failing entry", "admin-jobs-failing")
        entry.get_by_role("button", name=f"Retry now: entry {entry_id}").click()
        expect(page.locator(".notice.success")).to_contain_text(f"Entry {entry_id} is being tried again.")
        page.reload()
        expect(page.locator(".cards > li", has_text=f"Entry {entry_id}:")).to_have_count(0)
        _check(page, "the jobs page after the retry", "admin-jobs")

        # Write the About page; its script and javascript: link stay inert.
        page.get_by_role("link", name="Pages", exact=True).click()
        _check(page, "the content pages", "admin-pages")
        page.get_by_role("link", name="Write the About page").click()
        page.fill("#page-title", "About us")
        page.fill("#page-body", ABOUT)
        page.get_by_role("button", name="Save the page").click()
        expect(page.locator(".notice.success")).to_contain_text("The page is saved (version 1)")
        expect(page.locator("section.preview strong")).to_have_text("Example University")
        _check(page, "the page editor with a preview", "admin-page-edit")
        page.locator("footer").get_by_role("link", name="About us").click()
        page.wait_for_url("**/pages/about")
        expect(page.get_by_role("heading", name="Who we are")).to_be_visible()
        expect(page.locator("article")).to_contain_text('<script>document.title = "owned"</script>')
        page.locator("article").get_by_text("a link that must not run").click()
        assert page.title() != "owned" and page.url.endswith("/pages/about")
        _check(page, "the About page", "site-about")

        # The Terms of use, which sign-up then asks to accept.
        page.goto(base + "/admin/pages/terms")
        page.fill("#page-body", "## Use\n\nDeposit only what you may share.")
        page.get_by_role("button", name="Save the page").click()
        expect(page.locator(".notice.success")).to_contain_text("The page is saved (version 1)")

        # Change the colour: a pale one is refused, a dark one shows on every page.
        page.goto(base + "/admin/site/")
        page.fill("#site-colour", "#77aadd")
        page.get_by_role("button", name="Save the branding").click()
        expect(page.locator(".notice.error")).to_contain_text("at least 4.5:1")
        page.fill("#site-colour", "#7a1f5c")
        page.fill("#site-links", "Library | https://library.example.edu")
        page.get_by_role("button", name="Save the branding").click()
        expect(page.locator(".notice.success")).to_contain_text("The branding is saved.")
        button = page.get_by_role("button", name="Save the branding")
        assert button.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(122, 31, 92)"
        _check(page, "the branding page", "admin-site")

        # A maintenance banner, at once and until removed.
        page.get_by_role("link", name="Banners").click()
        page.fill("#banner-message", f"Maintenance tonight ({TAG}): uploads are paused.")
        page.get_by_role("button", name="Add the banner").click()
        expect(page.locator(".site-banner")).to_contain_text(f"Maintenance tonight ({TAG})")
        _check(page, "the banners page", "admin-banners")
        page.goto(base + "/")
        expect(page.locator(".site-banner")).to_contain_text(f"Maintenance tonight ({TAG})")
        expect(page.locator("footer")).to_contain_text("Library")
        _check(page, "the front page with the banner and the footer links", "site-front-branded")

        # Read it all back in the audit log.
        page.goto(base + "/admin/audit/")
        log = page.locator("table.audit")
        for action in ("outbox.retry", "page.create", "site.branding", "site.banner.add"):
            expect(log).to_contain_text(action)
        expect(log).to_contain_text("#7a1f5c")
        _check(page, "the audit log", "admin-audit-site")

        # A guest signing up is asked to accept the Terms (a context of its own: no administrator's cookies).
        guest = browser.new_context(ignore_https_errors=True, viewport=page.viewport_size).new_page()
        guest.goto(base + "/signup/")
        guest.fill("#email", f"newcomer-{TAG}@example.org")
        guest.fill("#password", PASSWORD)
        guest.fill("#password_again", PASSWORD)
        guest.get_by_role("button", name="Sign up").click()
        expect(guest.locator(".field-error")).to_have_text(["Accept the Terms of use to sign up."])
        expect(guest.get_by_label("I accept the Terms of use (version 1)")).not_to_be_checked()
        _check(guest, "sign-up asking to accept the Terms", "site-signup-terms")
        guest.get_by_label("I accept the Terms of use (version 1)").check()
        guest.fill("#password", PASSWORD)
        guest.fill("#password_again", PASSWORD)
        guest.get_by_role("button", name="Sign up").click()
        guest.wait_for_url("**/account/check-mail/")

        page.set_viewport_size(PHONE)
        for path in ("/admin/jobs/", "/admin/site/", "/admin/pages/", "/admin/pages/about", "/admin/banners/",
                     "/pages/about"):
            page.goto(base + path)
            check_page(page, f"{path} on a phone")

        # The banner goes: on PostgreSQL the next modules' servers share this database.
        page.goto(base + "/admin/banners/")
        page.get_by_role("button", name="Remove banner").first.click()
        page.goto(base + "/")
        expect(page.locator(".site-banner")).to_have_count(0)
