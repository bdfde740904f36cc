"""The record page's derived text in a real browser (headless Chromium) against the real server over HTTPS: names
with particles in the citation box, relations in words, the DOI broken only between its parts on a phone, the
OpenGraph tags, an export shown as text and downloaded under its name, and the previews of a TSV table, a file
named as a table that is not text, a text file, Markdown, JSON and a ZIP and a tar archive. Every page is checked
with axe-core and photographed at desktop and phone width."""

from __future__ import annotations

import io
import re
import tarfile
import zipfile

import pytest
from helpers.browser import PHONE, browser_session, check_page, screenshot
from helpers.http import token_session

METADATA = {
    "upload_type": "dataset", "title": "Soil moisture under the dunes", "license": "cc-by",
    "description": "<p>Collected in December 2023.</p><p>Columns:</p><ul><li>site</li><li>depth</li></ul>",
    "creators": [{"name": "van der Berg, Jan"}, {"name": "Beethoven, Ludwig van"}, {"name": "Lim, Seo-yeon"}],
    "related_identifiers": [{"identifier": "10.1234/companion.paper-2024", "relation": "isSupplementTo",
                             "scheme": "doi"}],
}  # fmt: skip


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data/readings.csv", "site,depth\n" * 200)
        archive.writestr("README.txt", "About the data")
    return buffer.getvalue()


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("code/analysis.py")
        content = b"print('moisture')\n"
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


FILES = {
    "depths.tsv": b"site\tdepth\n" + b"".join(b"S%d\t%d\n" % (i, i * 5) for i in range(30)),
    "image.csv": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "notes.txt": b"Field notes\n\nDay 1: dry.\nDay 2: rain < 5 mm.\n",
    "README.md": b"# Soil moisture\n\nRead **this** first, then see [the paper](https://example.org).\n\n"
                 b"- one\n- two\n\n<script>alert(1)</script>\n",
    "stations.json": b'{"stations": [{"id": "S1", "lat": 52.1, "active": true}, {"id": "S2", "lat": null}],'
                     b' "meta": {"source": {"agency": "Survey"}}}',
    "bundle.zip": _zip(),
    "code.tar.gz": _tar(),
}  # fmt: skip


@pytest.fixture(scope="module")
def record(live_server):  # type: ignore[no-untyped-def]
    base = live_server["url"]
    api = token_session(live_server, "derived@example.org")
    dep = api.post(f"{base}/api/deposit/depositions", json={"metadata": METADATA}, timeout=30).json()
    for name, content in FILES.items():
        assert api.put(f"{dep['links']['bucket']}/{name}", data=content, timeout=30).status_code in (200, 201)
    published = api.post(dep["links"]["publish"], timeout=30)
    assert published.status_code == 202, published.text
    yield published.json()
    api.close()


def test_citation_relations_doi_and_cards(live_server, record):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base, recid = live_server["url"], record["id"]
    with browser_session(live_server) as (_browser, page):
        page.goto(f"{base}/records/{recid}")
        citation = page.locator("#citation")
        sync_api.expect(citation).to_contain_text("van der Berg, J., Beethoven, L. van, & Lim, S.-y. (")
        page.get_by_label("Citation style").select_option("chicago-author-date")
        sync_api.expect(citation).to_contain_text("Berg, Jan van der, Ludwig van Beethoven, and Seo-yeon Lim.")
        page.get_by_label("Citation style").select_option("ieee")
        sync_api.expect(citation).to_contain_text("[1] J. van der Berg, L. van Beethoven, and S.-y. Lim,")
        assert page.locator(".related .relation").first.inner_text() == "Is a supplement to"
        og = page.locator('meta[property="og:description"]').get_attribute("content")
        assert og == "Collected in December 2023.\n\nColumns:\n\n- site\n- depth"
        assert page.locator('meta[property="og:title"]').get_attribute("content") == METADATA["title"]
        check_page(page, "record page with derived text")
        screenshot(page, "record-derived-text")

        # On a phone the DOIs break only where a <wbr> allows: after the slash, before a dot or hyphen.
        page.set_viewport_size(PHONE)
        lines = page.evaluate("""() => [...document.querySelectorAll('a.doi')].map(link => {
            const range = document.createRange(), text = link.textContent, lines = [];
            let top = null, line = '';
            const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              for (let i = 0; i < node.length; i++) {
                range.setStart(node, i); range.setEnd(node, i + 1);
                const y = Math.round(range.getBoundingClientRect().top);
                if (top !== null && y > top + 2) { lines.push(line); line = ''; }
                top = y; line += node.data[i];
              }
            }
            lines.push(line);
            return lines;
        })""")
        assert lines, "the page shows DOIs"
        for parts in lines:
            for left, right in zip(parts, parts[1:], strict=False):
                assert left.endswith("/") or right[:1] in ".-_", parts
        check_page(page, "record page on a phone", PHONE["width"])


def test_an_export_shown_and_downloaded(live_server, record):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base, recid = live_server["url"], record["id"]
    suffix = record["doi"].split("/", 1)[1]
    with browser_session(live_server) as (_browser, page):
        page.goto(f"{base}/records/{recid}")
        page.locator(".exports").get_by_role("link", name="BibTeX", exact=True).click()
        page.wait_for_url(f"**/records/{recid}/export/bibtex")
        sync_api.expect(page.locator("pre.export-text")).to_contain_text("author       = {van der Berg, Jan and Beethoven, Ludwig van and Lim, Seo-yeon}")
        check_page(page, "BibTeX export page")
        screenshot(page, "record-export-bibtex")
        with page.expect_download() as download:
            page.get_by_role("link", name=f"Download {suffix}.bib").click()
        assert download.value.suggested_filename == f"{suffix}.bib"
        page.goto(f"{base}/records/{recid}")
        with page.expect_download() as download:
            page.get_by_role("link", name=re.compile(r"^Download MARCXML")).click()
        assert download.value.suggested_filename == f"{suffix}-marcxml.xml"


@pytest.mark.parametrize(("key", "expected"), [
    ("depths.tsv", "Rows 1–30 of 30"), ("image.csv", "This file is not text"), ("notes.txt", "Day 2: rain < 5 mm."),
    ("README.md", "Read this first"), ("stations.json", '"agency"'), ("bundle.zip", "data/readings.csv"),
    ("code.tar.gz", "code/analysis.py"),
])  # fmt: skip
def test_previews(live_server, record, key, expected):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    base, recid = live_server["url"], record["id"]
    with browser_session(live_server) as (_browser, page):
        page.goto(f"{base}/records/{recid}")
        page.get_by_role("link", name=f"Preview {key}").click()
        frame = page.frame_locator("iframe.preview-frame")
        sync_api.expect(frame.locator("main")).to_contain_text(expected)
        if key == "README.md":
            assert frame.locator(".preview-markdown strong").inner_text() == "this"
            sync_api.expect(frame.locator("script")).to_have_count(0)
        if key == "stations.json":  # folded below the second level, opened by a click
            agency = frame.locator(".json-key", has_text='"agency"')
            sync_api.expect(agency).to_be_hidden()
            frame.locator("summary", has_text="1 key").last.click()
            sync_api.expect(agency).to_be_visible()
        page.goto(f"{base}/records/{recid}/preview/{key}")
        check_page(page, f"preview of {key}")
        screenshot(page, "preview-" + key.replace(".", "-"))
