"""Record pages in a real browser (headless Chromium, Playwright) against the real server over HTTPS: previews of an
image, a CSV table and a PDF; the citation style switched in place and copied; every export link answering; an older
version pointing at the newer one; a restricted record's access request; the tombstone of a record taken down; an
unknown id. Every page is checked with axe-core and photographed at desktop and phone width."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest
from helpers.browser import api_session, browser_session, check_page, screenshot
from helpers.http import ROOT, token_session
from PIL import Image

METADATA = {
    "upload_type": "dataset",
    "description": "<p>Readings with a <em>figure</em>, a table and a paper.</p>",
    "creators": [{"name": "Doe, Jane", "affiliation": "Polar Institute", "orcid": "0000-0002-1825-0097"},
                 {"name": "Roe, Richard"}],
    "keywords": ["sea ice", "arctic"],
    "license": "cc-by",
}


def _image(kind: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 200), (30, 110, 180)).save(buffer, kind)
    return buffer.getvalue()


def _publish(api, base: str, files: dict[str, bytes], **metadata) -> dict:  # type: ignore[no-untyped-def]
    dep = api.post(f"{base}/api/deposit/depositions", json={"metadata": {**METADATA, **metadata}}, timeout=30).json()
    for name, content in files.items():
        assert api.put(f"{dep['links']['bucket']}/{name}", data=content, timeout=30).status_code in (200, 201)
    published = api.post(dep["links"]["publish"], timeout=30)
    assert published.status_code == 202, published.text
    return published.json()


def _new_version(api, base: str, dep: dict, version: str) -> int:  # type: ignore[no-untyped-def]
    answer = api.post(f"{base}/api/deposit/depositions/{dep['id']}/actions/newversion", timeout=30).json()
    draft = answer["links"]["latest_draft"]
    body = api.get(draft, timeout=30).json()
    metadata = body["metadata"]
    metadata.pop("doi", None)
    # A new version's files must differ from the previous ones'.
    assert api.put(f"{body['links']['bucket']}/changes.txt", data=b"v" + version.encode(), timeout=30).ok
    assert api.put(draft, json={"metadata": {**metadata, "version": version,
                                             "publication_date": metadata["publication_date"]}},
                   timeout=30).status_code == 200  # fmt: skip
    published = api.post(f"{draft}/actions/publish", timeout=30)
    assert published.status_code == 202, published.text
    return int(published.json()["id"])


@pytest.fixture(scope="module")
def records(live_server):  # type: ignore[no-untyped-def]
    base = live_server["url"]
    api = token_session(live_server, "records@example.org")
    table = b"station,depth,thickness\n" + b"".join(b"S%d,%d,%d.5\n" % (i, i * 10, i) for i in range(80))
    first = _publish(api, base, {"figure.png": _image("PNG"), "table.csv": table, "paper.pdf": _image("PDF")},
                     title="Sea ice thickness", version="1")  # fmt: skip
    second = _new_version(api, base, first, "2")
    restricted = _publish(api, base, {"secret.csv": b"a\n1\n"}, title="Interviews", access_right="restricted",
                          access_conditions="<p>For researchers who sign the agreement.</p>")  # fmt: skip
    gone = _publish(api, base, {"x.txt": b"x"}, title="Withdrawn")
    subprocess.run([sys.executable, "scripts/takedown.py", "--recid", str(gone["id"])], env=live_server["env"],
                   cwd=ROOT, check=True, capture_output=True)  # fmt: skip
    yield {"first": first["id"], "second": second, "restricted": restricted["id"], "gone": gone["id"]}
    api.close()


def test_record_page_previews_citation_and_exports(live_server, records):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base, recid = live_server["url"], records["second"]
    refused: list[str] = []
    with browser_session(live_server) as (_browser, page):
        page.on("console", lambda message: refused.append(message.text) if "Refused" in message.text else None)
        page.goto(f"{base}/records/{recid}")
        assert page.locator("h1").inner_text() == "Sea ice thickness"
        # The image first, by its thumbnail, loaded.
        image = page.locator("#preview img.preview-image")
        sync_api.expect(image).to_have_attribute("src", re.compile(r"/thumb750$"))
        page.wait_for_function("() => document.querySelector('#preview img').naturalWidth > 0")
        check_page(page, "record page")
        screenshot(page, "record")

        # The table, in place: its first rows in the frame, and its next page.
        page.get_by_role("link", name="Preview table.csv").click()
        frame = page.frame_locator("iframe.preview-table")
        sync_api.expect(frame.locator("tbody tr").first).to_contain_text("S0")
        assert "preview=table.csv" in page.url
        frame.get_by_role("link", name="Next rows").click()
        sync_api.expect(frame.locator("tbody tr").first).to_contain_text("S50")
        check_page(page, "record page with the table")
        screenshot(page, "record-table")

        # The PDF, as the browser's viewer shows it: inline, from this site only.
        with page.expect_response(re.compile(r"/preview/paper\.pdf$")) as answer:
            page.get_by_role("link", name="Preview paper.pdf").click()
        pdf = answer.value
        assert pdf.status == 200 and pdf.headers["content-type"] == "application/pdf"
        assert pdf.headers["content-disposition"].startswith("inline")
        sync_api.expect(page.locator("iframe.preview-pdf")).to_have_attribute("title", "Preview of paper.pdf")
        check_page(page, "record page with the PDF")
        screenshot(page, "record-pdf")

        # The citation in another style, without a reload, then copied.
        citation = page.locator("#citation")
        assert citation.inner_text().startswith("Doe, J., & Roe, R.")
        page.get_by_label("Citation style").select_option("ieee")
        sync_api.expect(citation).to_contain_text("J. Doe and R. Roe")
        assert "style=ieee" in page.url
        page.get_by_role("button", name="Copy the citation").click()
        sync_api.expect(page.locator('[data-copy-status="citation"]')).to_have_text(re.compile("Copied|Selected"))

        # Every export link answers with its format.
        api = api_session(live_server)
        exports = page.locator(".exports a[type]")  # each format's download (its name opens it as text)
        assert exports.count() >= 10
        for i in range(exports.count()):
            link = exports.nth(i)
            got = api.get(link.get_attribute("href"), timeout=30)
            assert got.status_code == 200, (link.inner_text(), got.status_code)
            base_type = link.get_attribute("type").split(";")[0]  # a JSON-LD profile apart (RO-Crate, Croissant)
            assert got.headers["Content-Type"].split(";")[0] in (base_type, "application/json")
        # The style form works without scripts too (a GET of the page).
        page.goto(f"{base}/records/{recid}?style=modern-language-association")
        assert page.locator("#citation").inner_text().startswith("Doe, Jane, and Richard Roe. “Sea Ice Thickness”.")  # MLA: names whole
        assert page.get_by_label("Citation style").input_value() == "modern-language-association"
    assert not refused, refused  # nothing the Content-Security-Policy had to refuse


def test_older_version_restricted_gone_and_unknown(live_server, records):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base = live_server["url"]
    with browser_session(live_server) as (_browser, page):
        page.goto(f"{base}/records/{records['first']}")
        banner = page.locator(".newer-version")
        sync_api.expect(banner).to_contain_text("There is a newer version")
        check_page(page, "older version")
        screenshot(page, "record-older-version")
        banner.get_by_role("link").click()
        page.wait_for_url(f"**/records/{records['second']}")

        page.goto(f"{base}/records/{records['restricted']}")
        assert "secret.csv" not in page.content()
        sync_api.expect(page.locator(".access-note")).to_contain_text("For researchers who sign the agreement.")
        check_page(page, "restricted record")
        screenshot(page, "record-restricted")
        page.get_by_role("link", name="Request access").click()
        page.wait_for_url(f"**/records/{records['restricted']}/access/request")
        check_page(page, "access request form")
        screenshot(page, "record-access-request")

        answer = page.goto(f"{base}/records/{records['gone']}")
        assert answer is not None and answer.status == 410
        sync_api.expect(page.locator("h1")).to_have_text("This record was taken down")
        check_page(page, "tombstone")
        screenshot(page, "record-tombstone")

        answer = page.goto(f"{base}/records/987654")
        assert answer is not None and answer.status == 404
        sync_api.expect(page.locator("h1")).to_have_text("Not found")
        check_page(page, "unknown record")
        screenshot(page, "record-unknown")

        page.goto(f"{base}/records/{records['second']}/preview/table.csv")
        check_page(page, "table preview")
        screenshot(page, "record-table-preview")
