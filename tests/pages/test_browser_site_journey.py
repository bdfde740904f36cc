"""The whole site in one journey, in a real browser (headless Chromium, Playwright) against the real server over
HTTPS, as issue 18 asks: a curator makes a community; a researcher signs in, makes a deposition through the form
with two files and every kind of repeatable field, sees a refused value beside its field, publishes, finds the
record on the search page through a facet, opens its record page (citation, export links, preview, download),
makes a new version and sees the older page point at it; the curator accepts the record's request on the curation
page. Every page on the way is checked with axe-core and photographed at desktop and phone width."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from urllib.parse import urljoin

import pytest
from helpers.browser import (
    DESKTOP,
    add_row,
    api_session,
    browser_session,
    check_page,
    create_community,
    screenshot,
    sign_up_and_in,
)

TAG = uuid.uuid4().hex[:8]  # fresh names per run: on PostgreSQL the live server shares the test database
RESEARCHER = f"researcher-{TAG}@example.org"
CURATOR = f"curator-{TAG}@example.org"
PASSWORD = "a long passphrase 4 the journey"
COMMUNITY = f"glaciology-{TAG}"
TITLE = f"Glacier retreat {TAG}"


def _upload(page, dep_id: int, files: list, said: str) -> None:  # type: ignore[no-untyped-def]
    """Choose files in the file area: each goes to the bucket with a progress bar; wait until the area says `said`."""
    page.set_input_files(f"#upload-{dep_id}", [str(f) for f in files])
    page.wait_for_function("text => document.querySelector('[data-files-status]').textContent === text", arg=said)


def _save(page, button: str = "Save draft") -> None:  # type: ignore[no-untyped-def]
    with page.expect_navigation():
        page.get_by_role("button", name=button, exact=True).last.click()


def test_the_site_from_deposit_to_curation(live_server, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    base = live_server["url"]
    table = tmp_path / "glaciers.csv"
    table.write_bytes(b"glacier,retreat_m\n" + b"".join(b"G%d,%d\n" % (i, i * 3) for i in range(60)))
    notes = tmp_path / "notes.txt"
    notes.write_text("Field notes, summer 2024.\n", encoding="utf-8")
    erratum = tmp_path / "erratum.txt"
    erratum.write_text("Station G7 was misread.\n", encoding="utf-8")

    with browser_session(live_server) as (browser, page):
        # The curator, in a browser of their own, makes the community.
        curator = browser.new_context(ignore_https_errors=True, viewport=DESKTOP).new_page()
        curator.set_default_timeout(30_000)
        sign_up_and_in(curator, live_server, CURATOR, PASSWORD, "/communities/new")
        create_community(curator, COMMUNITY, f"Glaciology {TAG}", "<p>Ice and meltwater.</p>")

        # The researcher starts an upload from the header's button.
        page.goto(base + "/")
        check_page(page, "front page")
        screenshot(page, "journey-front")
        sign_up_and_in(page, live_server, RESEARCHER, PASSWORD, "/deposit/new")
        page.get_by_role("button", name="Start a new upload").click()
        page.wait_for_url(re.compile(r"/deposit/\d+$"))
        dep_url = page.url
        dep_id = int(dep_url.rsplit("/", 1)[1])

        # Two files, through the file area, each with its progress bar.
        _upload(page, dep_id, [table, notes], "Uploaded 2 files.")
        assert page.locator("[data-progress] .upload-pct").all_text_contents() == ["100%", "100%"]

        # Every kind of field; one ORCID is wrong.
        page.select_option("#upload_type", "dataset")
        page.fill("#title", TITLE)
        page.fill("#publication_date", "2024-05-01")
        page.fill("#description", "<p>Measured retreat of 60 glaciers.</p>")
        page.fill("#creators-0-name", "Doe, Jane")
        page.fill("#creators-0-orcid", "0000-0002-1825-0097")
        page.fill("#creators-0-affiliation", "Polar Institute")
        page.fill("#keywords-0", f"moraine{TAG}")
        page.fill("#version", "1.0")
        page.check("#access_right-open")
        page.fill("#license", "cc-by")
        for details in page.locator("details.section").all():
            if details.get_attribute("open") is None:
                details.locator("summary").click()
        add_row(page, "creators", {"name": "Roe, Richard", "orcid": "1234"})
        add_row(page, "keywords", {"": "climate"})
        add_row(page, "communities", {"identifier": COMMUNITY})
        add_row(page, "grants", {"id": "10.13039/501100000780::246686"})
        add_row(page, "related_identifiers", {"identifier": "10.5281/zenodo.123", "relation": "isSupplementTo"})
        add_row(page, "contributors", {"name": "Poe, Edgar", "type": "DataCollector"})
        add_row(page, "references", {"": "Doe, J. (2020). Ice. Nature."})
        add_row(page, "subjects", {"term": "Glaciology", "identifier": "https://example.org/glaciology"})
        add_row(page, "locations", {"place": "Aletsch, Switzerland", "lat": "46.5", "lon": "8.03"})
        add_row(page, "dates", {"start": "2024-06-01", "end": "2024-08-31", "type": "Collected"})
        _save(page)
        assert page.locator("#creators-1-orcid").get_attribute("aria-invalid") == "true"
        expect(page.locator("#creators-1-orcid-error")).to_contain_text("16 digits in four groups")
        assert page.locator("#title").input_value() == TITLE  # nothing typed is lost
        check_page(page, "deposit form with an error")
        screenshot(page, "journey-deposit-error")
        page.fill("#creators-1-orcid", "0000-0001-5109-3700")
        _save(page)
        expect(page.locator(".notice.success")).to_contain_text("Draft saved.")
        check_page(page, "filled deposit form")
        screenshot(page, "journey-deposit-filled")

        _save(page, "Review and publish")
        expect(page.locator("h1")).to_contain_text("Publish")
        _save(page, "Publish")
        expect(page.locator(".badge").first).to_have_text("Published")
        recid = int(page.get_by_role("link", name="View the published record").get_attribute("href").rsplit("/", 1)[1])

        # The record is found on the search page through a facet.
        page.goto(f"{base}/search?q={TAG}")
        with page.expect_navigation():
            page.locator(".facets").get_by_role("link", name=re.compile(rf"^moraine{TAG}\s+1")).click()
        assert f"keywords=moraine{TAG}" in page.url
        expect(page.locator(".result-title a")).to_have_text([TITLE])
        check_page(page, "search page with a facet")
        screenshot(page, "journey-search")
        with page.expect_navigation():
            page.locator(".result-title a").click()
        assert page.url.endswith(f"/records/{recid}")

        # Its record page: citation, exports, the table's preview, a download.
        expect(page.locator("h1")).to_have_text(TITLE)
        assert page.locator("#citation").inner_text().startswith("Doe, J., & Roe, R.")
        exports = page.locator(".exports a")
        assert exports.count() >= 8
        api = api_session(live_server)
        for i in range(exports.count()):  # each format shown as text, and downloaded
            assert api.get(urljoin(page.url, exports.nth(i).get_attribute("href")), timeout=30).status_code == 200
        page.get_by_role("link", name="Preview glaciers.csv").click()
        expect(page.frame_locator("iframe.preview-table").locator("tbody tr").first).to_contain_text("G0")
        with page.expect_download() as download:
            page.get_by_role("link", name="Download notes.txt").click()
        assert Path(download.value.path()).read_bytes() == notes.read_bytes()
        check_page(page, "record page")
        screenshot(page, "journey-record")

        # A new version, with one more file; the first version's page then points at it.
        page.goto(dep_url)
        with page.expect_navigation():
            page.get_by_role("button", name="New version").click()
        new_id = int(page.url.rsplit("/", 1)[1])
        assert new_id != dep_id
        _upload(page, new_id, [erratum], "Uploaded 1 file.")
        page.fill("#version", "2.0")
        _save(page, "Review and publish")
        _save(page, "Publish the new version")
        expect(page.locator(".badge").first).to_have_text("Published")
        page.goto(f"{base}/records/{recid}")
        banner = page.locator(".newer-version")
        expect(banner).to_contain_text("There is a newer version")
        check_page(page, "older version")
        screenshot(page, "journey-older-version")

        # The curator accepts the record into the community.
        curator.goto(f"{base}/communities/{COMMUNITY}/curate")
        expect(curator.get_by_role("link", name=TITLE).first).to_be_visible()
        check_page(curator, "curation page")
        screenshot(curator, "journey-curate")
        with curator.expect_navigation():
            curator.get_by_role("button", name="Accept").first.click()
        assert "accepted" in curator.get_by_role("status").filter(has_text="accepted").inner_text()
        curator.goto(f"{base}/communities/{COMMUNITY}/")
        expect(curator.locator(".result-title a").first).to_have_text(TITLE)
        check_page(curator, "community page")
