"""The deposit form in a real browser (headless Chromium, Playwright) against the real server over HTTPS, with its
JavaScript: start a draft, fill every kind of field with rows added in place, save with a typo (the rest is saved,
the typo kept as typed beside its error, still there after leaving and coming back), be asked before leaving with
unsaved changes, correct it, publish through the review step, then a new version through it. Every page is checked
with axe-core and photographed at desktop and phone width."""

from __future__ import annotations

import re
import uuid

import pytest
from helpers.browser import add_row, browser_session, check_page, fill_row, screenshot, sign_up_and_in

EMAIL = f"depositor-{uuid.uuid4().hex[:8]}@example.org"  # fresh: PostgreSQL keeps earlier runs' users
PASSWORD = "a long passphrase 4 tests"


def _api_write(page, method: str, url: str, **kwargs):  # type: ignore[no-untyped-def]
    """An API write with the browser's session, its CSRF token and a Referer of the site, as the page's scripts do."""
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
    headers = {"X-CSRFToken": token, "Referer": page.url, **kwargs.pop("headers", {})}
    answer = page.request.fetch(url, method=method, headers=headers, **kwargs)
    assert answer.ok, answer.text()
    return answer


def test_fill_save_and_publish_the_deposit_form(live_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    with browser_session(live_server) as (_browser, page):
        sign_up_and_in(page, live_server, EMAIL, PASSWORD, "/deposit/new")
        check_page(page, "new upload page")
        page.get_by_role("button", name="Start a new upload").click()
        page.wait_for_url(re.compile(r"/deposit/\d+$"))
        dep_url = page.url
        check_page(page, "empty deposit form")
        screenshot(page, "deposit-form-empty")

        # A community to ask for, made through the API with the page's session.
        _api_write(page, "POST", base + "/api/communities/",
                   data={"identifier": "glaciers", "title": "Glacier research", "description": "Ice."})

        # Fields that do not apply are hidden by the script.
        expect(page.locator("#publication_type")).to_be_hidden()
        page.select_option("#upload_type", "publication")
        expect(page.locator("#publication_type")).to_be_visible()
        page.select_option("#publication_type", "article")
        page.fill("#title", "Glacier retreat 2024")
        page.fill("#publication_date", "2024-05-01")
        page.fill("#description", "<p>Measured retreat of 12 glaciers.</p>")
        page.fill("#creators-0-name", "Doe, Jane")
        page.fill("#creators-0-orcid", "0000-0002-1825-0097")
        add_row(page, "creators")
        fill_row(page, "creators", {"name": "Roe, Richard", "orcid": "1234"})  # refused below
        page.fill("#keywords-0", "glaciers")
        add_row(page, "keywords")
        fill_row(page, "keywords", {"": "climate"})
        page.fill("#version", "1.0")
        page.fill("#language", "English")  # by name, stored as its code
        page.check("#access_right-open")
        expect(page.locator("#license")).to_have_value("cc-by")  # the type's default, chosen as the type was picked
        page.fill("#license", "Creative Commons Attribution 4.0 International")

        for details in page.locator("details.section").all():
            if details.get_attribute("open") is None:
                details.locator("summary").click()
        add_row(page, "communities")
        fill_row(page, "communities", {"identifier": "glaciers"})
        add_row(page, "grants")
        # The picker asks the grants search as one types.
        with page.expect_response(re.compile(r"/api/grants/\?size=20&q=OPENAIRE")):
            page.locator('[data-group="grants"] input').last.type("OPENAIRE")
        fill_row(page, "grants", {"id": "10.13039/501100000780::246686"})
        add_row(page, "related_identifiers")
        fill_row(page, "related_identifiers", {"identifier": "10.5281/zenodo.123", "relation": "isSupplementTo"})
        add_row(page, "contributors")
        fill_row(page, "contributors", {"name": "Poe, Edgar", "type": "DataCollector"})
        add_row(page, "references")
        fill_row(page, "references", {"": "Doe, J. (2020). Ice. Nature."})
        add_row(page, "thesis_supervisors")
        fill_row(page, "thesis_supervisors", {"name": "Moe, Mary"})
        add_row(page, "subjects")
        fill_row(page, "subjects", {"term": "Glaciology", "identifier": "https://example.org/glaciology"})
        add_row(page, "locations")
        fill_row(page, "locations", {"place": "Aletsch, Switzerland", "lat": "46.5", "lon": "8.03"})
        add_row(page, "dates")
        fill_row(page, "dates", {"start": "2024-06-01", "end": "2024-08-31", "type": "Collected"})
        # A row added and removed again leaves nothing behind.
        add_row(page, "dates")
        page.locator('[data-group="dates"] [data-rows] > [data-row]').last.locator("[data-remove-row]").click()
        assert page.locator('[data-group="dates"] [data-rows] > [data-row]').count() == 1
        page.fill("#journal_title", "Journal of Ice")
        page.fill("#method", "Satellite images.")

        # The refused ORCID is shown beside its input, kept as typed; everything else is saved.
        with page.expect_navigation():
            page.get_by_role("button", name="Save draft", exact=True).last.click()
        api_url = dep_url.replace("/deposit/", "/api/deposit/depositions/")
        partly = page.request.get(api_url).json()["metadata"]
        assert partly["title"] == "Glacier retreat 2024" and partly["creators"][1] == {"name": "Roe, Richard"}
        assert partly["grants"] == [{"id": "10.13039/501100000780::246686"}]
        # It stays so after leaving the page and coming back.
        page.get_by_role("link", name="← My uploads").click()
        page.wait_for_url(re.compile(r"/deposit$"))
        page.goto(dep_url)
        orcid = page.locator("#creators-1-orcid")
        assert orcid.input_value() == "1234" and orcid.get_attribute("aria-invalid") == "true"
        assert "16 digits in four groups" in page.locator("#creators-1-orcid-error").inner_text()
        expect(page.locator(".notice.error").first).to_contain_text("kept as you typed them")
        assert page.evaluate("() => document.activeElement.id") == "error-summary"
        assert page.locator("#title").input_value() == "Glacier retreat 2024"
        assert page.locator("#grants-0-id").input_value() == "10.13039/501100000780::246686"
        check_page(page, "deposit form with errors")
        screenshot(page, "deposit-form-errors")
        # Leaving with unsaved changes asks first; staying keeps what was typed.
        page.fill("#version", "1.0.1")
        asked: list[str] = []
        page.once("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
        with page.expect_event("dialog"):
            page.get_by_role("link", name="← My uploads").click(no_wait_after=True)
        assert asked == ["beforeunload"] and page.url == dep_url
        assert page.locator("#version").input_value() == "1.0.1"
        page.locator('#error-summary a[href="#creators-1-orcid"]').click()
        assert page.evaluate("() => document.activeElement.id") == "creators-1-orcid"
        orcid.fill("0000-0001-5109-3700")
        with page.expect_navigation():
            page.get_by_role("button", name="Save draft", exact=True).last.click()
        assert page.url == dep_url
        expect(page.locator(".notice.success")).to_contain_text("Draft saved.")

        # A file, through the bucket as the file area's script sends it.
        bucket = page.request.get(dep_url.replace("/deposit/", "/api/deposit/depositions/")).json()["links"]["bucket"]
        _api_write(page, "PUT", bucket + "/glaciers.csv", data=b"glacier,retreat_m\nAletsch,52\n")
        page.reload()
        check_page(page, "filled deposit form")
        screenshot(page, "deposit-form-filled")
        saved = page.request.get(dep_url.replace("/deposit/", "/api/deposit/depositions/")).json()["metadata"]
        for key in ("creators", "keywords", "communities", "grants", "related_identifiers", "contributors",
                    "references", "thesis_supervisors", "subjects", "locations", "dates"):
            assert saved.get(key), key
        assert len(saved["creators"]) == 2 and len(saved["dates"]) == 1
        assert saved["language"] == "eng" and saved["license"] == "cc-by"
        assert page.locator("#language").input_value() == "English"

        # Publishing goes through the review step, which says what will happen.
        with page.expect_navigation():
            page.get_by_role("button", name="Review and publish", exact=True).click()
        assert page.url == dep_url + "/publish"
        review = page.locator("main")
        expect(review).to_contain_text("is registered for the upload")
        expect(review).to_contain_text("glaciers.csv")
        expect(review).to_contain_text("Inclusion is asked of the community glaciers")
        check_page(page, "review before publishing")
        screenshot(page, "deposit-review")
        with page.expect_navigation():
            page.get_by_role("button", name="Publish", exact=True).click()
        expect(page.locator(".badge")).to_have_text("Published")
        check_page(page, "published deposition")
        screenshot(page, "deposit-form-published")

        # A new version: a changed file, then the review step again.
        with page.expect_navigation():
            page.get_by_role("button", name="New version").click()
        draft_url = page.url
        assert draft_url != dep_url
        draft_bucket = page.request.get(draft_url.replace("/deposit/", "/api/deposit/depositions/")).json()[
            "links"]["bucket"]
        _api_write(page, "PUT", draft_bucket + "/glaciers-2025.csv", data=b"glacier,retreat_m\nAletsch,49\n")
        page.fill("#version", "2.0")
        with page.expect_navigation():
            page.get_by_role("button", name="Review and publish", exact=True).click()
        expect(page.locator("h1")).to_have_text("Publish this new version?")
        expect(page.locator("main")).to_contain_text("The earlier versions keep their DOIs")
        check_page(page, "review of a new version")
        screenshot(page, "deposit-review-new-version")
        with page.expect_navigation():
            page.get_by_role("button", name="Publish the new version", exact=True).click()
        expect(page.locator(".badge")).to_have_text("Published")
