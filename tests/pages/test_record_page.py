"""The record page (`/records/<id>`, the records' `links.html`) over HTTP, as a browser reads it."""

from __future__ import annotations

import json
import re

import html5lib
import pytest
from helpers.factories import make_deposit, new_version, publish, published, upload
from helpers.http import https_client
from helpers.pages import csrf_from, referer, sign_in, sign_up_and_confirm
from sqlalchemy import update

import serializers
from repository.records.cache import RecordCache
from repository.records.takedown import take_down
from repository.storage.tables.records import records

FULL = {
    "title": "Sea ice thickness 2019",
    "upload_type": "dataset",
    "description": "<p>Daily <strong>thickness</strong> readings.</p>",
    "creators": [{"name": "Doe, Jane", "affiliation": "Polar Institute", "orcid": "0000-0002-1825-0097"},
                 {"name": "Roe, Richard"}],
    "contributors": [{"name": "Poe, Edgar", "type": "DataCurator", "affiliation": "Archive"}],
    "keywords": ["sea ice", "arctic"],
    "license": "cc-by",
    "version": "1.0",
    "language": "eng",
    "notes": "<p>Calibrated twice.</p>",
    "references": ["Smith, J. (2018). Ice. Journal of Cold, 1."],
    "related_identifiers": [{"identifier": "10.1234/other", "relation": "isCitedBy", "scheme": "doi"}],
    "subjects": [{"term": "Glaciology", "identifier": "https://example.org/glaciology", "scheme": "url"}],
    "locations": [{"place": "Fram Strait", "lat": 79.0, "lon": -2.5}],
    "dates": [{"type": "Collected", "start": "2019-01-01", "end": "2019-12-31"}],
}


def page(client, path, **kwargs):  # type: ignore[no-untyped-def]
    response = client.get(path, **kwargs)
    return response, response.get_data(as_text=True)


def test_the_page_shows_the_whole_record(client, auth):
    dep = published(client, auth, **FULL)
    response, html = page(client, f"/records/{dep['id']}")
    assert response.status_code == 200 and response.mimetype == "text/html"
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    assert tree.find(".//h1").text == FULL["title"]
    assert tree.find(".//main") is not None  # inside the site's layout
    assert 'href="https://orcid.org/0000-0002-1825-0097"' in html and "(Polar Institute)" in html
    assert "Poe, Edgar" in html and "DataCurator" in html
    assert "<strong>thickness</strong>" in html  # the sanitised description, as HTML
    assert "Calibrated twice." in html and "Smith, J. (2018)" in html
    assert 'href="https://doi.org/10.1234/other"' in html and "isCitedBy" in html
    assert "Glaciology" in html and "Fram Strait" in html and "2019-01-01" in html
    assert "English" in html and "1.0" in html
    assert "Creative Commons Attribution 4.0" in html and 'rel="license"' in html
    assert f'src="https://localhost/badge/doi/{dep["doi"]}.svg"' in html
    assert f'<meta name="citation_doi" content="{dep["doi"]}">' in html
    assert '<meta name="citation_author" content="Roe, Richard">' in html
    script = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    assert json.loads(script)["name"] == FULL["title"]
    # Files: a readable size, both checksums, a download link; the archive.
    assert "data.csv" in html and "8 Bytes" in html
    assert "SHA-256" in html and re.search(r"<code>[0-9a-f]{64}</code>", html)
    assert f'/api/records/{dep["id"]}/files-archive' in html
    # The citation (APA by default) and every format of the registry that describes a dataset (not CodeMeta).
    assert "Doe, J., &amp; Roe, R. (" in html
    for name in serializers.REGISTRY:
        shown = f'href="https://localhost/api/records/{dep["id"]}?format={name}"' in html
        assert shown == (name != "codemeta"), name
    assert f'/api/records/{dep["id"]}/files-archive?format=rocrate' in html
    assert "Views" in html and "Downloads" in html


def test_description_html_is_cleaned_again_when_shown(client, auth, app):
    dep = published(client, auth)
    # A description stored before sanitising existed (an import, an old row) is cleaned on the way out too.
    services = app.extensions["repository"]
    with services.db.write() as conn:
        row = conn.execute(records.select().where(records.c.id == dep["id"])).mappings().first()
        metadata = {**row["metadata"], "description": '<p onclick="x()">Hi</p><script>alert(1)</script>'}
        conn.execute(update(records).where(records.c.id == dep["id"]).values(metadata=metadata, revision=row["revision"] + 1))
    services.record_cache = RecordCache()
    _, html = page(client, f"/records/{dep['id']}")
    shown = re.search(r'<div class="description">(.*?)</div>', html, re.S).group(1)
    assert shown == "<p>Hi</p>" and "<script>alert" not in html and "onclick" not in html


@pytest.mark.slow  # 0.4 s and more of work
def test_citation_styles_are_chosen_by_a_get_form(client, auth):
    dep = published(client, auth, **FULL)
    _, html = page(client, f"/records/{dep['id']}?style=ieee")
    assert re.search(r'<option value="ieee" selected>', html)
    assert "J. Doe and R. Roe" in html
    response, html = page(client, f"/records/{dep['id']}?style=no-such-style")
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert 'Unknown citation style &#34;no-such-style&#34;' in html and 'aria-invalid="true"' in html
    assert "<h1" in html and FULL["title"] in html  # still the record's page


def test_a_concept_id_moves_and_latest_redirects(client, auth):
    dep = published(client, auth)
    response = client.get(f"/records/{dep['conceptrecid']}")
    assert response.status_code == 301 and response.headers["Location"] == f"https://localhost/records/{dep['id']}"
    second = new_version(client, auth, dep, b"x,y\n3,4\n")
    latest = client.get(f"/records/{dep['id']}/latest")
    assert latest.status_code == 302 and latest.headers["Location"] == f"https://localhost/records/{second}"


@pytest.mark.slow
def test_an_older_version_says_a_newer_one_exists(client, auth):
    dep = published(client, auth, version="1")
    _, before = page(client, f"/records/{dep['id']}")  # a guest's page, kept until the record changes
    assert "There is a newer version" not in before
    second = new_version(client, auth, dep, b"x,y\n3,4\n")
    _, old = page(client, f"/records/{dep['id']}")
    assert "There is a newer version of this record." in old and f'href="/records/{second}"' in old
    _, new = page(client, f"/records/{second}")
    assert "There is a newer version" not in new
    assert f'href="/records/{dep["id"]}"' in new and 'aria-current="page"' in new


def _views(html: str) -> tuple[str, str]:
    found = re.search(r'<th scope="row">Views</th><td>(\d+)</td><td>(\d+)</td>', html)
    assert found is not None
    return found.group(1), found.group(2)


def test_a_guest_page_shows_the_counts_of_the_moment(client, auth, app):
    dep = published(client, auth)
    _, html = page(client, f"/records/{dep['id']}", headers={"User-Agent": "Mozilla/5.0 Firefox/120"})
    assert _views(html) == ("0", "0")
    app.extensions["repository"].indexer.run_pass()  # the worker's pass counts the view
    _, html = page(client, f"/records/{dep['id']}", environ_base={"REMOTE_ADDR": "192.0.2.77"},
                   headers={"User-Agent": "Mozilla/5.0 Firefox/120"})  # fmt: skip
    assert _views(html) == ("1", "1")


def test_unknown_and_taken_down_records_are_pages(client, auth, app):
    response, html = page(client, "/records/99999")
    assert response.status_code == 404 and response.mimetype == "text/html" and "<main" in html
    dep = published(client, auth)
    second = new_version(client, auth, dep, b"x,y\n3,4\n")
    with app.extensions["repository"].db.write() as conn:
        take_down(conn, dep["id"])
    response, html = page(client, f"/records/{dep['id']}")
    assert response.status_code == 410 and response.mimetype == "text/html"
    assert "taken down" in html and f'href="/records/{second}"' in html
    assert client.get("/records/2147483648").status_code == 404  # past a database integer: not a 500


@pytest.mark.slow
def test_etag_and_caching(client, auth):
    dep = published(client, auth)
    first = client.get(f"/records/{dep['id']}")
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "public, no-cache" and "Last-Modified" in first.headers
    assert "Set-Cookie" not in first.headers  # a guest's page is the same for every guest
    again = client.get(f"/records/{dep['id']}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    # Another style is another page.
    other = client.get(f"/records/{dep['id']}?style=ieee", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["ETag"] != etag
    # The owner (a token) sees a page nobody else may keep.
    owned = client.get(f"/records/{dep['id']}", headers=auth)
    assert "no-store" in owned.headers["Cache-Control"]


@pytest.mark.slow  # 0.4 s and more of work
def test_restricted_and_embargoed_records_say_what_applies(client, auth):
    restricted = published(client, auth, access_right="restricted", access_conditions="<p>Researchers only.</p>")
    _, html = page(client, f"/records/{restricted['id']}")
    assert "restricted" in html and "Researchers only." in html
    assert f'href="/records/{restricted["id"]}/access/request"' in html and "data.csv" not in html
    _, owner = page(client, f"/records/{restricted['id']}", headers=auth)
    assert "data.csv" in owner and "Request access" not in owner
    embargoed = published(client, auth, access_right="embargoed", embargo_date="2999-01-01")
    _, html = page(client, f"/records/{embargoed['id']}")
    assert "under embargo until 2999-01-01" in html and "data.csv" not in html


PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def _with_files(client, auth, files: dict[str, bytes], **overrides):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, **overrides)
    for name, content in files.items():
        upload(client, auth, dep, name=name, content=content)
    return publish(client, auth, dep)


@pytest.mark.slow  # 0.4 s and more of work
def test_previews_of_a_table_an_image_and_a_pdf(client, auth):
    rows = b"n,name\n" + b"".join(b"%d,row %d\n" % (i, i) for i in range(120))
    dep = _with_files(client, auth, {"figure.png": PNG, "table.csv": rows, "paper.pdf": PDF, "data.bin": b"hi"})
    recid = dep["id"]
    response, html = page(client, f"/records/{recid}")
    assert response.headers["Content-Security-Policy"].count("frame-src 'self'") == 1
    # The first previewable file (the image, by its thumbnail) is shown; each previewable file has a link.
    assert f'src="https://localhost/api/records/{recid}/thumb750"' in html
    for key in ("figure.png", "table.csv", "paper.pdf"):
        assert f'href="?preview={key}#preview"' in html
    assert 'data-preview="data.bin"' not in html
    _, html = page(client, f"/records/{recid}?preview=table.csv")
    assert f'<iframe class="preview-frame preview-table" title="Preview of table.csv" src="/records/{recid}/preview/table.csv">' in html
    table, text = page(client, f"/records/{recid}/preview/table.csv")
    assert table.status_code == 200 and table.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert "frame-ancestors 'self'" in table.headers["Content-Security-Policy"]
    assert "row 0" in text and "row 49" in text and "row 50" not in text and "Rows 1–50 of 120" in text
    _, text = page(client, f"/records/{recid}/preview/table.csv?offset=100")
    assert "row 119" in text and "Rows 101–120 of 120" in text and 'rel="prev"' in text and 'rel="next"' not in text
    assert client.get(f"/records/{recid}/preview/table.csv?offset=-5").status_code == 404
    # Past the rows, even past what SQLite's integers hold (a 500 once, found by schemathesis): no rows.
    far, text = page(client, f"/records/{recid}/preview/table.csv?offset=17483745299238544495603613696")
    assert far.status_code == 200 and "row 0" not in text and 'rel="prev"' in text
    _, html = page(client, f"/records/{recid}?preview=paper.pdf")
    assert f'src="/records/{recid}/preview/paper.pdf"' in html and '<meta name="citation_pdf_url"' in html
    pdf = client.get(f"/records/{recid}/preview/paper.pdf")
    body = pdf.data
    pdf.close()  # its file handle, as a server would
    assert pdf.status_code == 200 and body == PDF and pdf.mimetype == "application/pdf"
    assert pdf.headers["Content-Disposition"].startswith("inline") and pdf.headers["X-Frame-Options"] == "SAMEORIGIN"
    # The download itself stays an attachment; files without a preview have none.
    assert client.get(f"/records/{recid}/preview/data.bin").status_code == 404
    assert client.get(f"/records/{recid}/preview/missing.csv").status_code == 404


def test_a_file_named_pdf_that_is_not_one_has_no_preview(client, auth):
    dep = _with_files(client, auth, {"fake.pdf": b"<html><script>alert(1)</script>"})
    response = client.get(f"/records/{dep['id']}/preview/fake.pdf")
    assert response.status_code == 404 and response.mimetype == "text/html"


def test_previews_of_restricted_files_are_hidden(client, auth):
    dep = _with_files(client, auth, {"table.csv": b"a\n1\n"}, access_right="restricted", access_conditions="Ask.")
    assert client.get(f"/records/{dep['id']}/preview/table.csv").status_code == 404
    assert client.get(f"/records/{dep['id']}/preview/table.csv", headers=auth).status_code == 200


@pytest.mark.parametrize("path", ["/records/abc", "/records/1/preview/", "/records/-1"])
def test_malformed_addresses_are_html_404s(client, path):
    response = client.get(path)
    assert response.status_code == 404


ODD = ["", "\x00", "%00", "é" * 300, "../../etc/passwd", "a" * 5000, "<script>", "apa\n", "-1", "1e9", "𝔘"]


@pytest.mark.slow  # 0.4 s and more of work
def test_odd_query_values_never_fail(client, auth):
    dep = _with_files(client, auth, {"table.csv": b"a,b\n1,2\n"})
    recid = dep["id"]
    for value in ODD:
        for query in ({"style": value}, {"preview": value}, {"locale": value}):
            response = client.get(f"/records/{recid}", query_string=query)
            assert response.status_code in (200, 400) and response.mimetype == "text/html", (query, response.status_code)
        answer = client.get(f"/records/{recid}/preview/table.csv", query_string={"offset": value})
        assert answer.status_code in (200, 404), (value, answer.status_code)
        assert client.get(f"/records/{recid}/preview/{value or 'x'}").status_code in (404, 308)


def test_a_signed_in_reader_gets_the_same_record_in_their_own_layout(client, auth, app):
    dep = published(client, auth)
    guest_page = client.get(f"/records/{dep['id']}")  # the record's part of the page is made here
    reader = https_client(app)
    sign_up_and_confirm(reader, app, "reader@example.org", "a long passphrase 4 tests")
    assert sign_in(reader, "reader@example.org", "a long passphrase 4 tests").status_code == 303
    own = reader.get(f"/records/{dep['id']}")
    html = own.get_data(as_text=True)
    assert "reader@example.org" in html and "reader@example.org" not in guest_page.get_data(as_text=True)
    assert own.headers["Cache-Control"] == "private, no-store" and own.headers["ETag"] != guest_page.headers["ETag"]
    # The sign-out form of the page carries this session's token: it works.
    out = reader.post("/logout/", data={"csrf_token": csrf_from(html)}, headers=referer(f"/records/{dep['id']}"))
    assert out.status_code in (302, 303)
    assert "reader@example.org" not in reader.get(f"/records/{dep['id']}").get_data(as_text=True)
